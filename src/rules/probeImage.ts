// Reads the format and pixel size of a PNG or JPEG from its bytes, in pure JavaScript.
// The format comes from magic bytes, never from a name. A file cut short (its PNG chunks
// or JPEG end marker missing) is unreadable, as a decoder would find it. Never throws.

import type { ImageInfo, ProbeFailure } from "./MediaInfo.js";

export type { ImageInfo, ProbeFailure } from "./MediaInfo.js";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const fail = (reason: string): ProbeFailure => ({ kind: "unreadable", reason });

export function probeImage(data: Uint8Array): ImageInfo | ProbeFailure {
  try {
    if (data.length >= 8 && PNG_SIGNATURE.every((b, i) => data[i] === b)) return probePng(data);
    if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return probeJpeg(data);
    return fail("not a PNG or JPEG file");
  } catch {
    // Defensive only: the readers check every bound before reading.
    return fail("unreadable image data");
  }
}

const u32 = (d: Uint8Array, o: number) => ((d[o]! << 24) | (d[o + 1]! << 16) | (d[o + 2]! << 8) | d[o + 3]!) >>> 0;
const u16 = (d: Uint8Array, o: number) => (d[o]! << 8) | d[o + 1]!;
const ascii = (d: Uint8Array, o: number, n: number) => String.fromCharCode(...d.subarray(o, o + n));

/** IHDR must come first; the chunk chain must reach IEND within the file. */
function probePng(d: Uint8Array): ImageInfo | ProbeFailure {
  if (d.length < 8 + 8 + 13 || ascii(d, 12, 4) !== "IHDR" || u32(d, 8) !== 13) {
    return fail("truncated PNG: no IHDR header");
  }
  const width = u32(d, 16);
  const height = u32(d, 20);
  if (width === 0 || height === 0) return fail("PNG with zero width or height");
  let o = 8;
  let sawData = false;
  for (;;) {
    if (o + 8 > d.length) return fail("truncated PNG: ends before IEND");
    const len = u32(d, o);
    const type = ascii(d, o + 4, 4);
    const next = o + 12 + len;
    if (next > d.length) return fail(`truncated PNG: ${type} chunk cut short`);
    if (type === "IDAT") sawData = true;
    if (type === "IEND") break;
    o = next;
  }
  if (!sawData) return fail("PNG without image data");
  return { kind: "image", format: "png", width, height, bytes: d.length };
}

/**
 * Walks the marker segments up to the first SOFn (baseline, extended, progressive,
 * lossless; not DHT/JPG/DAC, which share the range) and checks that an end-of-image
 * marker follows.
 */
function probeJpeg(d: Uint8Array): ImageInfo | ProbeFailure {
  let o = 2;
  while (o + 4 <= d.length) {
    if (d[o] !== 0xff) return fail("damaged JPEG: marker expected");
    const marker = d[o + 1]!;
    if (marker === 0xff) {
      o++; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      o += 2; // markers without a length
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return fail("JPEG without a frame header");
    const len = u16(d, o + 2);
    if (len < 2 || o + 2 + len > d.length) return fail("truncated JPEG: segment cut short");
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) {
      if (len < 8) return fail("damaged JPEG: short frame header");
      const height = u16(d, o + 5);
      const width = u16(d, o + 7);
      if (width === 0 || height === 0) return fail("JPEG with zero width or height");
      if (!hasEndMarker(d, o + 2 + len)) return fail("truncated JPEG: no end-of-image marker");
      return { kind: "image", format: "jpeg", width, height, bytes: d.length };
    }
    o += 2 + len;
  }
  return fail("truncated JPEG: no frame header");
}

/** EOI at the end, allowing trailing padding some writers add. */
function hasEndMarker(d: Uint8Array, from: number): boolean {
  const start = Math.max(from, d.length - 4096);
  for (let i = d.length - 2; i >= start; i--) {
    if (d[i] === 0xff && d[i + 1] === 0xd9) return true;
  }
  return false;
}
