// Where a task's result files go, and the one check that keeps every write inside the
// outputs folder whatever a manifest or the service says. Pure path arithmetic.

import { isAbsolute, posix, relative, resolve, sep } from "node:path";
import { isPlainRelativePath, outsideProblem, UnsafeOutputPath } from "../fs/insidePath.js";

export { UnsafeOutputPath } from "../fs/insidePath.js";

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

let lastRoot: { readonly dir: string; readonly root: string } | undefined;
const rootOf = (outputsDir: string): string => {
  if (lastRoot?.dir !== outputsDir) lastRoot = { dir: outputsDir, root: resolve(outputsDir) };
  return lastRoot.root;
};

/**
 * The absolute path of `rel` (a `/`-separated path relative to the outputs folder),
 * refusing anything that would resolve outside it (`..`, absolute paths, drive letters):
 * the rule is fs/insidePath.ts `outsideProblem`, the one the lockfile reader and the
 * store's keys use too.
 */
export const resolveInside = (outputsDir: string, rel: string): string => {
  const root = rootOf(outputsDir);
  // The usual case, checked cheaply (a rerun checks 100,000 of them): plain names joined
  // by `/`, none empty, `.` or `..`, none holding a separator, a drive colon or a NUL.
  // Names like that cannot leave the folder, and need no normalising: joined as text
  // (path.join cost a fifth of a rerun's check of each recorded file).
  if (isPlainRelativePath(rel)) {
    const tail = sep === "/" ? rel : rel.split("/").join(sep);
    return root.endsWith(sep) ? `${root}${tail}` : `${root}${sep}${tail}`;
  }
  if (outsideProblem(rel) !== undefined) {
    throw new UnsafeOutputPath(`refusing to write outside the outputs folder: ${JSON.stringify(rel)}`);
  }
  const target = resolve(root, ...rel.split("/"));
  const back = relative(root, target);
  if (back === "" || back.startsWith("..") || isAbsolute(back) || back.split(sep).includes("..")) {
    throw new UnsafeOutputPath(`refusing to write outside the outputs folder: ${JSON.stringify(rel)}`);
  }
  return target;
};

/** The lockfile's form of a file's place: relative to the outputs folder, `/` separators. */
export const relativePath = (dir: string, name: string): string => posix.join(dir.split(sep).join("/"), name);
