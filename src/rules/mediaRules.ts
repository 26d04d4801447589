// The spec's limits on input media (file size, pixels, ratio, duration, frame rate),
// applied to what probing found. Sizes use 1 MB = 1024 * 1024 bytes: the spec does not
// say, and the binary reading is the one that never rejects a file the service takes.

import type { ImageInfo, ProbeFailure, VideoInfo } from "./MediaInfo.js";
import { violation, type Violation } from "./Violation.js";

export const MB = 1024 * 1024;
export const IMAGE_MEDIA = {
  /** first_frame / last_frame / refer_image of a video task. */
  maxBytesVideoSide: 50 * MB,
  /** image_list of an image task. */
  maxBytesImageSide: 10 * MB,
  minSide: 300,
  /** width / height within [1/2.5, 2.5], both ends included. */
  maxRatio: 2.5,
} as const;
export const VIDEO_MEDIA = {
  maxBytes: 200 * MB,
  minDurationSec: 3,
  maxDurationSec: 10,
  minSide: 700,
  maxSide: 2160,
  minFps: 24,
  maxFps: 60,
} as const;
/**
 * Containers store durations and frame rates as integer ticks, so a 10 s clip can read
 * 10.0000x s and NTSC "24" is 23.976 fps. These tolerances keep such files on the side of
 * the bound they are meant to be on; a 10.1 s clip or a 23 fps one is still out.
 */
export const DURATION_TOLERANCE_SEC = 0.02;
export const FPS_TOLERANCE = 0.03;

const mb = (bytes: number) => `${(bytes / MB).toFixed(bytes < MB ? 3 : 1)} MB`;

export function checkImageMedia(info: ImageInfo, side: "video" | "image", field: string): Violation[] {
  const out: Violation[] = [];
  const max = side === "video" ? IMAGE_MEDIA.maxBytesVideoSide : IMAGE_MEDIA.maxBytesImageSide;
  if (info.bytes > max) {
    out.push(violation(field, "media.image.size", `image must be at most ${max / MB} MB (got ${mb(info.bytes)})`));
  }
  if (info.width < IMAGE_MEDIA.minSide || info.height < IMAGE_MEDIA.minSide) {
    out.push(
      violation(
        field,
        "media.image.dimensions",
        `image width and height must each be at least ${IMAGE_MEDIA.minSide} px (got ${info.width}x${info.height})`,
      ),
    );
  }
  // Compared by cross-multiplication so 750x300 (exactly 2.5:1) is not lost to rounding.
  const { width: w, height: h } = info;
  if (w > 0 && h > 0 && (w * 2 > h * 5 || h * 2 > w * 5)) {
    out.push(
      violation(
        field,
        "media.image.ratio",
        `image aspect ratio must be between 1:2.5 and 2.5:1 (got ${w}x${h}, ${(w / h).toFixed(3)}:1)`,
      ),
    );
  }
  return out;
}

export function checkVideoMedia(info: VideoInfo, field: string): Violation[] {
  const out: Violation[] = [];
  const v = VIDEO_MEDIA;
  if (info.bytes > v.maxBytes) {
    out.push(violation(field, "media.video.size", `video must be at most ${v.maxBytes / MB} MB (got ${mb(info.bytes)})`));
  }
  if (
    info.durationSec < v.minDurationSec - DURATION_TOLERANCE_SEC ||
    info.durationSec > v.maxDurationSec + DURATION_TOLERANCE_SEC
  ) {
    out.push(
      violation(
        field,
        "media.video.duration",
        `video must last from ${v.minDurationSec} to ${v.maxDurationSec} s (got ${info.durationSec.toFixed(3)} s)`,
      ),
    );
  }
  const sideOk = (n: number) => n >= v.minSide && n <= v.maxSide;
  if (!sideOk(info.width) || !sideOk(info.height)) {
    out.push(
      violation(
        field,
        "media.video.dimensions",
        `video width and height must each be from ${v.minSide} to ${v.maxSide} px (got ${info.width}x${info.height})`,
      ),
    );
  }
  if (info.fps < v.minFps - FPS_TOLERANCE || info.fps > v.maxFps + FPS_TOLERANCE) {
    out.push(
      violation(
        field,
        "media.video.fps",
        `video frame rate must be from ${v.minFps} to ${v.maxFps} fps (got ${Number(info.fps.toFixed(3))} fps)`,
      ),
    );
  }
  return out;
}

/** A file that could not be probed: wrong format, or a damaged file of the right one. */
export function describeProbeFailure(
  failure: ProbeFailure,
  field: string,
  expected: "image" | "video" = "image",
): Violation {
  const formats = expected === "image" ? "jpg/jpeg or png" : "mp4 or mov";
  return violation(
    field,
    `media.${expected}.format`,
    `${expected} must be a readable ${formats} file (${failure.reason})`,
  );
}
