// What a task's result files are called: the one rule for the downloader (outputs/) and
// for plan (manifest/taskFiles.ts), so plan shows the names a run writes. The names come from
// the job's `name` template and the kind of each output; the extension from the link, its
// Content-Type or the kind. Pure. Here, below the plan, rather than with the downloader:
// the plan may not reach up to outputs/ (src/README.md).

export interface OutputRef {
  readonly type: "video" | "image" | "audio" | "voice" | "element";
  readonly index: number;
  readonly variant: "main" | "watermark" | "mp3" | "wav" | "meta";
}

const knownExtensions = new Set(["png", "jpg", "jpeg", "webp", "gif", "mp4", "mov", "webm", "mp3", "wav", "m4a"]);

const byContentType: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "image/gif": "gif",
  "video/mp4": "mp4",
  "video/quicktime": "mov",
  "video/webm": "webm",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
};

const fallback = (o: OutputRef): string =>
  o.variant === "mp3" ? "mp3" : o.variant === "wav" ? "wav" : o.type === "video" ? "mp4" : o.type === "image" ? "png" : "bin";

/** The file extension: the link's own, else the Content-Type's, else what the item type implies. */
export const extensionFor = (o: OutputRef, url: string, contentType: string | undefined): string => {
  try {
    const match = /\.([A-Za-z0-9]{2,5})$/.exec(new URL(url).pathname);
    const ext = match?.[1]?.toLowerCase();
    if (ext && knownExtensions.has(ext)) return ext;
  } catch {
    // not a URL: fall through
  }
  const type = contentType?.split(";")[0]?.trim().toLowerCase();
  return (type && byContentType[type]) ?? fallback(o);
};

/**
 * A result file's name, the one rule for run and plan. Without a name template:
 * `video-1.mp4`, `video-1.watermark.mp4`, `image-3.png`, `audio-1.wav`. With one (`name`,
 * already sanitised to one segment): `A-1-studio.mp4`, `A-1-studio-1.png` (images are
 * always numbered, a video only from its second), `A-1-studio-audio-1.mp3` for the other
 * item types, `.watermark` before the extension for a watermarked copy. Numbers are
 * 1-based, like `item.index` in templates; distinct outputs of a task get distinct names.
 */
export const fileNameFor = (o: OutputRef, ext: string, name?: string): string => {
  const mark = o.variant === "watermark" ? ".watermark" : "";
  if (name === undefined) return `${o.type}-${o.index + 1}${mark}.${ext}`;
  const n =
    o.type === "image" ? `-${o.index + 1}` : o.type === "video" ? (o.index > 0 ? `-${o.index + 1}` : "") : `-${o.type}-${o.index + 1}`;
  return `${name}${n}${mark}.${ext}`;
};

/** The extension a result of this kind gets when neither its link nor its Content-Type names one. */
export const usualExtension = (o: OutputRef): string => fallback(o);
