// What probing a media file tells the rules: format and geometry for images,
// container, geometry, duration and frame rate for videos, or why it could not be read.

export interface ImageInfo {
  readonly kind: "image";
  readonly format: "png" | "jpeg";
  readonly width: number;
  readonly height: number;
  /** Size of the whole file in bytes. */
  readonly bytes: number;
}

export interface VideoInfo {
  readonly kind: "video";
  readonly container: "mp4" | "mov";
  readonly width: number;
  readonly height: number;
  readonly durationSec: number;
  /** Average frame rate of the video track (samples over media duration). */
  readonly fps: number;
  /** Size of the whole file in bytes. */
  readonly bytes: number;
}

export interface ProbeFailure {
  readonly kind: "unreadable";
  /** Why, in a few words, e.g. "not a PNG or JPEG file", "truncated PNG". */
  readonly reason: string;
}
