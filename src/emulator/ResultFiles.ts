// The files behind a task's result links, by name (video.mp4, image-0.wm.png,
// audio.wav, ...), made by OutputMedia and kept in a small cache since many links
// point at equal bytes.

import { audioOutput, imageCaption, imageOutput, videoOutput } from "./OutputMedia.js";
import type { Task } from "./Task.js";
import type { Thumbnail } from "./ReferenceImage.js";

export interface ResultFile {
  readonly bytes: Uint8Array;
  readonly contentType: string;
}

const cacheLimit = 256;
const cache = new Map<string, ResultFile>();

const cached = (key: string, make: () => ResultFile): ResultFile => {
  const hit = cache.get(key);
  if (hit) return hit;
  const file = make();
  if (cache.size >= cacheLimit) cache.delete(cache.keys().next().value!);
  cache.set(key, file);
  return file;
};

const png = (aspectRatio: string, watermark: boolean, seed: number, caption?: readonly string[], background?: Thumbnail): ResultFile =>
  cached(`png:${aspectRatio}:${watermark}:${seed}:${background?.key ?? ""}:${caption?.join("\n") ?? ""}`, () => ({
    bytes: imageOutput({ aspectRatio, watermark, seed, ...(caption ? { caption } : {}), ...(background ? { background } : {}) }),
    contentType: "image/png",
  }));

/** The file `name` of a task, or undefined when the task has no such file. */
export const resultFile = (task: Task, name: string, extraOutputs: boolean): ResultFile | undefined => {
  if (task.kind === "image") {
    const m = /^image-(\d{1,2})(\.wm)?\.png$/.exec(name);
    if (!m) return undefined;
    const index = Number(m[1]);
    if (index >= task.image!.count || (m[2] && !task.watermark)) return undefined;
    // Seed by task and position so the images of one task differ from each other.
    // The first words of its prompt on it: a gallery shows at a glance which task made which file.
    const caption = task.caption !== undefined ? imageCaption(task.caption, index, task.image!.count, task.image!.aspectRatio) : undefined;
    return png(task.image!.aspectRatio, m[2] !== undefined, (task.seq * 16 + index) % 4096, caption, task.reference);
  }
  const v = task.video!;
  if (name === "video.mp4" || (name === "video.wm.mp4" && task.watermark)) {
    const watermark = name === "video.wm.mp4";
    return cached(`mp4:${v.aspectRatio}:${v.durationSec}:${watermark}`, () => ({
      bytes: videoOutput({ aspectRatio: v.aspectRatio, durationSec: v.durationSec, watermark }),
      contentType: "video/mp4",
    }));
  }
  if (!extraOutputs) return undefined;
  if (name === "audio.mp3" || name === "voice.mp3") {
    const sec = name === "voice.mp3" ? 2 : v.durationSec;
    return cached(`mp3:${sec}`, () => ({ bytes: audioOutput("mp3", sec), contentType: "audio/mpeg" }));
  }
  if (name === "audio.wav") {
    return cached(`wav:${v.durationSec}`, () => ({ bytes: audioOutput("wav", v.durationSec), contentType: "audio/wav" }));
  }
  if (name === "element-frontal.png") return png("1:1", false, 4097);
  if (name === "element-reference.png") return png("3:4", false, 4098);
  return undefined;
};
