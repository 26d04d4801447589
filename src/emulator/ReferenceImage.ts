// A small copy of a task's first reference image, for the emulator's result pictures:
// a generated image is drawn over it (and captioned), so a gallery shows at a glance that
// the right input made the right file. Pure JavaScript (node:zlib inflates); PNG only
// (8-bit grey, grey+alpha, RGB, RGBA, palette; not interlaced). Anything else, and URLs,
// give no copy: the picture keeps its plain colour. Copies are shared by content.

import { createHash } from "node:crypto";
import { inflateSync } from "node:zlib";

/** RGB pixels of a copy at most THUMB_SIDE on its long side. */
export interface Thumbnail {
  /** Content key (for result caches). */
  readonly key: string;
  readonly width: number;
  readonly height: number;
  readonly rgb: Uint8Array;
}

export const THUMB_SIDE = 96;
/** Larger inputs are not decoded (the service's own limit on images is 10 MB). */
const MAX_PIXELS = 5000 * 5000;

const paeth = (a: number, b: number, c: number): number => {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};

/** The RGB pixels of a PNG, or undefined when it is not one this reads. */
export const decodePng = (bytes: Uint8Array): { width: number; height: number; rgb: Uint8Array } | undefined => {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length < 33 || sig.some((b, i) => bytes[i] !== b)) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let width = 0;
  let height = 0;
  let depth = 0;
  let colour = 0;
  let interlace = 0;
  let palette: Uint8Array | undefined;
  const idat: Uint8Array[] = [];
  for (let at = 8; at + 8 <= bytes.length; ) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(bytes[at + 4]!, bytes[at + 5]!, bytes[at + 6]!, bytes[at + 7]!);
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (data.length !== length) return undefined;
    if (type === "IHDR") {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      depth = bytes[at + 16]!;
      colour = bytes[at + 17]!;
      interlace = bytes[at + 20]!;
    } else if (type === "PLTE") palette = data;
    else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") break;
    at += 12 + length;
  }
  const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[colour];
  if (!channels || depth !== 8 || interlace !== 0 || width === 0 || height === 0 || width * height > MAX_PIXELS) return undefined;
  if (colour === 3 && !palette) return undefined;
  let raw: Uint8Array;
  try {
    raw = inflateSync(Buffer.concat(idat), { maxOutputLength: (width * channels + 1) * height + 1 });
  } catch {
    return undefined;
  }
  const stride = width * channels;
  if (raw.length < (stride + 1) * height) return undefined;
  const px = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? px[row + x - channels]! : 0;
      const b = y > 0 ? px[row - stride + x]! : 0;
      const c = x >= channels && y > 0 ? px[row - stride + x - channels]! : 0;
      const v = raw[src + x]!;
      px[row + x] = (filter === 0 ? v : filter === 1 ? v + a : filter === 2 ? v + b : filter === 3 ? v + ((a + b) >> 1) : filter === 4 ? v + paeth(a, b, c) : v) & 255;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    if (colour === 2 || colour === 6) {
      rgb[i * 3] = px[i * channels]!;
      rgb[i * 3 + 1] = px[i * channels + 1]!;
      rgb[i * 3 + 2] = px[i * channels + 2]!;
    } else if (colour === 3) {
      const p = px[i]! * 3;
      rgb[i * 3] = palette![p] ?? 0;
      rgb[i * 3 + 1] = palette![p + 1] ?? 0;
      rgb[i * 3 + 2] = palette![p + 2] ?? 0;
    } else {
      const g = px[i * channels]!;
      rgb[i * 3] = g;
      rgb[i * 3 + 1] = g;
      rgb[i * 3 + 2] = g;
    }
  }
  return { width, height, rgb };
};

/** A copy at most `side` pixels on its long side (box average). */
export const shrink = (img: { width: number; height: number; rgb: Uint8Array }, side = THUMB_SIDE): { width: number; height: number; rgb: Uint8Array } => {
  const f = Math.max(1, Math.max(img.width, img.height) / side);
  const width = Math.max(1, Math.round(img.width / f));
  const height = Math.max(1, Math.round(img.height / f));
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const y0 = Math.floor((y * img.height) / height);
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * img.height) / height));
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor((x * img.width) / width);
      const x1 = Math.max(x0 + 1, Math.floor(((x + 1) * img.width) / width));
      let r = 0, g = 0, b = 0, n = 0;
      for (let yy = y0; yy < y1; yy++) {
        for (let xx = x0; xx < x1; xx++) {
          const p = (yy * img.width + xx) * 3;
          r += img.rgb[p]!;
          g += img.rgb[p + 1]!;
          b += img.rgb[p + 2]!;
          n++;
        }
      }
      const q = (y * width + x) * 3;
      rgb[q] = Math.round(r / n);
      rgb[q + 1] = Math.round(g / n);
      rgb[q + 2] = Math.round(b / n);
    }
  }
  return { width, height, rgb };
};

const cache = new Map<string, Thumbnail | null>();
const CACHE_LIMIT = 64;

/** The copy of an image input given as raw base64 (or a data: URI); undefined for URLs and what cannot be read. */
export const referenceThumbnail = (value: string): Thumbnail | undefined => {
  if (/^https?:/i.test(value)) return undefined;
  const key = createHash("sha256").update(value).digest("hex").slice(0, 32);
  const hit = cache.get(key);
  if (hit !== undefined) return hit ?? undefined;
  const b64 = value.startsWith("data:") ? value.slice(value.indexOf(",") + 1) : value;
  const decoded = decodePng(Buffer.from(b64, "base64"));
  const thumb = decoded ? { key, ...shrink(decoded) } : undefined;
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, thumb ?? null);
  return thumb;
};
