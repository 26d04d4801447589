// The emulator's result files: real, small, decodable media. PNG images and WAV / MP3
// audio are generated here in pure JavaScript; MP4 videos are committed assets in
// ./media (made once by ffmpeg with media/make.sh), read on first use and cached.
// Images can carry a caption (the first words of their prompt) drawn in a tiny bitmap
// font, over a scaled copy of the task's first reference image when it has one
// (ReferenceImage.ts), so a person looking at a contact sheet can tell the right file is
// in the right cell. Returned arrays may be shared between calls: treat them as read-only.

import { readFileSync } from "node:fs";
import { constants, deflateRawSync, deflateSync } from "node:zlib";
import { adler32, adler32Combine, adlerBlock, adlerByte, adlerPixels, adlerStart, adlerValue, FixedDeflateWriter, MAX_DISTANCE, type Adler } from "./FixedDeflate.js";

export type OutputVideoRatio = "16:9" | "9:16" | "1:1";

// ---------------------------------------------------------------- images

/**
 * Pixel sizes per ratio: exact ratios with the short side at least 320 px, so a result
 * passes the service's image input rules (>= 300 px) when a later job uses it as input.
 */
export const IMAGE_OUTPUT_SIZES: Readonly<Record<string, readonly [number, number]>> = {
  "16:9": [576, 324],
  "9:16": [324, 576],
  "1:1": [320, 320],
  "4:3": [428, 321],
  "3:4": [321, 428],
  "3:2": [480, 320],
  "2:3": [320, 480],
  "21:9": [756, 324],
};

/** Colours a seed picks from: mid-tones, so the white watermark band stands out. */
const PALETTE: ReadonlyArray<readonly [number, number, number]> = [
  [42, 77, 143], [160, 60, 60], [60, 140, 80], [150, 110, 40], [110, 60, 150], [40, 130, 140],
  [170, 90, 120], [90, 90, 90], [120, 140, 50], [60, 60, 130], [140, 70, 30], [30, 100, 60],
];

/** Compressed pixel data (IDAT payload) per size, colour and watermark: at most 8 x 12 x 2. */
const idatCache = new Map<string, Uint8Array>();

/**
 * The rows under a caption panel, compressed once per size, colour, watermark and panel
 * height (at most 8 x 12 x 2 x 6 for the captions imageCaption makes): the zlib header,
 * the raw deflate blocks (the last one final), and the Adler-32 and length of those rows.
 */
interface RowsBelow {
  readonly header: Uint8Array;
  readonly deflated: Uint8Array;
  readonly adler: number;
  readonly length: number;
}
const belowCache = new Map<string, RowsBelow>();
const belowCacheLimit = 4096;

/** A task's reference picture as imageOutput draws over it; `key` (its content) lets the drawing be cached. */
export interface Background {
  readonly key?: string;
  readonly width: number;
  readonly height: number;
  readonly rgb: Uint8Array;
}

/**
 * Pictures over a reference, by reference key, size, colour and watermark: the scanlines
 * without a caption (the bilinear pass, done once for every task sharing the reference),
 * and per panel height the rows under the caption panel compressed. Bounded by bytes: a
 * picture is 0.3 to 0.7 MB raw; cleared whole past the limit (a bench or a test makes few).
 */
interface ReferencePicture {
  readonly raw: Uint8Array;
  readonly below: Map<number, RowsBelow>;
}
const referenceCache = new Map<string, ReferencePicture>();
let referenceCacheBytes = 0;
const referenceCacheLimitBytes = 48 * 1024 * 1024;

/**
 * A PNG of the requested aspect ratio ("auto" and unknown ratios give 1:1), one colour
 * picked by `seed`, with a white band across the lower part when `watermark`. The seed
 * is also written into a text chunk, so two results never have the same bytes.
 */
export function imageOutput(opts: {
  aspectRatio: string;
  watermark: boolean;
  seed: number;
  caption?: readonly string[];
  /** The task's first reference image, drawn scaled to cover the picture under the caption. */
  background?: Background;
}): Uint8Array {
  const [width, height] = IMAGE_OUTPUT_SIZES[opts.aspectRatio] ?? IMAGE_OUTPUT_SIZES["1:1"]!;
  const colourIndex = Math.abs(Math.trunc(opts.seed)) % PALETTE.length || 0;
  let idat: Uint8Array | undefined;
  if (opts.background?.key !== undefined) {
    // Over the task's reference: the picture is drawn and the rows under the caption
    // compressed once per reference, size, colour and watermark; only the panel per task.
    idat = referenceIdat(width, height, colourIndex, opts.watermark, opts.caption, opts.background);
  } else if (opts.background) {
    idat = pixels(width, height, PALETTE[colourIndex]!, opts.watermark, opts.caption, opts.background);
  } else if (opts.caption && opts.caption.length > 0) {
    // Only the caption panel differs per task: the rows under it come compressed from a cache.
    idat = captionedIdat(width, height, colourIndex, opts.watermark, opts.caption);
  } else {
    const key = `${width}x${height}:${colourIndex}:${opts.watermark}`;
    idat = idatCache.get(key);
    if (idat === undefined) {
      idat = pixels(width, height, PALETTE[colourIndex]!, opts.watermark);
      idatCache.set(key, idat);
    }
  }
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, no filter method, no interlace
  const text = new TextEncoder().encode(`Comment\0omnibatch emulator result, seed ${opts.seed}`);
  return concat([
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    chunk("IHDR", ihdr),
    chunk("tEXt", text),
    chunk("IDAT", idat),
    chunk("IEND", new Uint8Array(0)),
  ]);
}

/**
 * The scanlines imageOutput encodes, drawn whole (every row, then the caption): what a
 * decoder must get back from imageOutput's file, whichever way it was assembled.
 */
export function imagePixels(opts: { aspectRatio: string; watermark: boolean; seed: number; caption?: readonly string[]; background?: Background }): Uint8Array {
  const [width, height] = IMAGE_OUTPUT_SIZES[opts.aspectRatio] ?? IMAGE_OUTPUT_SIZES["1:1"]!;
  const colourIndex = Math.abs(Math.trunc(opts.seed)) % PALETTE.length || 0;
  const raw = rawRows(width, height, 0, height, PALETTE[colourIndex]!, opts.watermark, opts.background);
  if (opts.caption && opts.caption.length > 0) drawCaption(raw, 1 + width * 3, width, height, opts.caption);
  return raw;
}

function pixels(
  width: number,
  height: number,
  rgb: readonly [number, number, number],
  watermark: boolean,
  caption?: readonly string[],
  background?: { readonly width: number; readonly height: number; readonly rgb: Uint8Array },
): Uint8Array {
  const raw = rawRows(width, height, 0, height, rgb, watermark, background);
  // An empty caption (a prompt of blanks) draws no panel, as on a plain picture.
  if (caption && caption.length > 0) drawCaption(raw, 1 + width * 3, width, height, caption);
  return new Uint8Array(deflateSync(raw, { level: caption || background ? 6 : 9 }));
}

/**
 * The PNG scanlines (filter byte 0, then RGB) of rows `from` to `to` (excluded) of the
 * picture without its caption: one colour, or the scaled reference, and the watermark band.
 */
function rawRows(
  width: number,
  height: number,
  from: number,
  to: number,
  rgb: readonly [number, number, number],
  watermark: boolean,
  background?: { readonly width: number; readonly height: number; readonly rgb: Uint8Array },
): Uint8Array {
  const stride = 1 + width * 3;
  // Scale to cover: the reference fills the picture, cut at the sides or top and bottom.
  const cover = background ? Math.max(width / background.width, height / background.height) : 0;
  const offX = background ? (background.width * cover - width) / 2 : 0;
  const offY = background ? (background.height * cover - height) / 2 : 0;
  const raw = new Uint8Array(stride * (to - from));
  const bandTop = Math.floor(height * 0.78);
  const bandBottom = Math.floor(height * 0.92);
  // The columns' sample points, the same for every row: where in the copy, and the weight.
  let col0: Int32Array | undefined;
  let col1: Int32Array | undefined;
  let colF: Float64Array | undefined;
  if (background) {
    col0 = new Int32Array(width);
    col1 = new Int32Array(width);
    colF = new Float64Array(width);
    for (let x = 0; x < width; x++) {
      const sx = Math.min(background.width - 1, Math.max(0, (x + offX) / cover - 0.5));
      const x0 = Math.floor(sx);
      col0[x] = x0 * 3;
      col1[x] = Math.min(background.width - 1, x0 + 1) * 3;
      colF[x] = sx - x0;
    }
  }
  for (let y = from; y < to; y++) {
    const white = watermark && y >= bandTop && y < bandBottom;
    const row = (y - from) * stride;
    raw[row] = 0; // filter: none
    if (background && !white) {
      // Bilinear sample of the small copy, tinted a quarter towards the task's colour.
      const src = background.rgb;
      const sy = Math.min(background.height - 1, Math.max(0, (y + offY) / cover - 0.5));
      const y0 = Math.floor(sy);
      const y1 = Math.min(background.height - 1, y0 + 1);
      const fy = sy - y0;
      const line0 = y0 * background.width * 3;
      const line1 = y1 * background.width * 3;
      for (let x = 0; x < width; x++) {
        const p = row + 1 + x * 3;
        const a = col0![x]!;
        const b = col1![x]!;
        const fx = colF![x]!;
        for (let c = 0; c < 3; c++) {
          const top = src[line0 + a + c]! * (1 - fx) + src[line0 + b + c]! * fx;
          const bottom = src[line1 + a + c]! * (1 - fx) + src[line1 + b + c]! * fx;
          raw[p + c] = Math.round((top * (1 - fy) + bottom * fy) * 0.75 + rgb[c]! * 0.25);
        }
      }
      continue;
    }
    for (let x = 0; x < width; x++) {
      const p = row + 1 + x * 3;
      raw[p] = white ? 255 : rgb[0];
      raw[p + 1] = white ? 255 : rgb[1];
      raw[p + 2] = white ? 255 : rgb[2];
    }
  }
  return raw;
}

/**
 * The IDAT payload of a captioned picture without a reference: one zlib stream made of
 * the caption panel (encoded from its layout, captionPanelDeflate), then the rows under
 * it from belowCache, the checksum of both combined. The pixels are those `pixels` draws;
 * a download costs a step per run of the panel, not a pass over the picture's bytes.
 */
function captionedIdat(width: number, height: number, colourIndex: number, watermark: boolean, caption: readonly string[]): Uint8Array {
  const rgb = PALETTE[colourIndex]!;
  const stride = 1 + width * 3;
  const panel = captionPanelHeight(width, height, caption);
  const key = `${width}x${height}:${colourIndex}:${watermark}:${panel}`;
  let below = belowCache.get(key);
  if (below === undefined) {
    const raw = rawRows(width, height, panel, height, rgb, watermark);
    const z = deflateSync(raw, { level: 9 });
    below = { header: z.subarray(0, 2), deflated: z.subarray(2, z.length - 4), adler: z.readUInt32BE(z.length - 4), length: raw.length };
    if (belowCache.size >= belowCacheLimit) belowCache.clear();
    belowCache.set(key, below);
  }
  const panelData = captionPanelDeflate(width, height, rgb, watermark, caption);
  const trailer = new Uint8Array(4);
  new DataView(trailer.buffer).setUint32(0, adler32Combine(panelData.adler, below.adler, below.length));
  return concat([below.header, panelData.deflated, below.deflated, trailer]);
}

/**
 * The IDAT payload of a picture over a reference: one zlib stream made of the caption
 * panel (copied from the cached drawing, darkened, its glyphs drawn, compressed alone and
 * flushed to a byte boundary) and the rows under it from the cache, the checksum of both
 * combined. The pixels are those `pixels` draws over the same reference.
 */
function referenceIdat(
  width: number,
  height: number,
  colourIndex: number,
  watermark: boolean,
  caption: readonly string[] | undefined,
  background: Background,
): Uint8Array {
  const stride = 1 + width * 3;
  const key = `${background.key}:${width}x${height}:${colourIndex}:${watermark}`;
  let picture = referenceCache.get(key);
  if (picture === undefined) {
    const raw = rawRows(width, height, 0, height, PALETTE[colourIndex]!, watermark, background);
    if (referenceCacheBytes + raw.length > referenceCacheLimitBytes) {
      referenceCache.clear();
      referenceCacheBytes = 0;
    }
    picture = { raw, below: new Map() };
    referenceCache.set(key, picture);
    referenceCacheBytes += raw.length;
  }
  const panel = caption && caption.length > 0 ? captionPanelHeight(width, height, caption) : 0;
  let below = picture.below.get(panel);
  if (below === undefined) {
    const rows = picture.raw.subarray(panel * stride);
    const z = deflateSync(rows, { level: 6 });
    below = { header: z.subarray(0, 2), deflated: z.subarray(2, z.length - 4), adler: z.readUInt32BE(z.length - 4), length: rows.length };
    picture.below.set(panel, below);
    referenceCacheBytes += z.length;
  }
  if (panel === 0) return concat([below.header, below.deflated, trailerOf(below.adler)]);
  const top = picture.raw.slice(0, panel * stride);
  drawCaption(top, stride, width, height, caption!);
  // Level 1: the panel is a few dozen rows, and any level gives the same pixels.
  const panelData = deflateRawSync(top, { level: 1, finishFlush: constants.Z_SYNC_FLUSH });
  return concat([below.header, panelData, below.deflated, trailerOf(adler32Combine(adler32(top), below.adler, below.length))]);
}

const trailerOf = (adler: number): Uint8Array => {
  const trailer = new Uint8Array(4);
  new DataView(trailer.buffer).setUint32(0, adler);
  return trailer;
};

/**
 * A stretch of pixels of one panel row: its runs of one colour (flat: r, g, b, count, ...)
 * and the Adler-32 sums of its bytes. Equal stretches are one object, so a later one is
 * sent as a copy of the last: `at` is where that began in the picture being encoded
 * (numbered `picture`).
 */
interface Stretch {
  readonly runs: readonly number[];
  readonly pixels: number;
  readonly adler: Adler;
  picture: number;
  at: number;
}

const makeStretch = (runs: number[]): Stretch => {
  const adler = adlerStart();
  let pixels = 0;
  for (let i = 0; i < runs.length; i += 4) {
    adlerPixels(adler, runs[i]!, runs[i + 1]!, runs[i + 2]!, runs[i + 3]!);
    pixels += runs[i + 3]!;
  }
  return { runs, pixels, adler, picture: -1, at: 0 };
};

/** The stretches of one panel shade (24-bit RGB) and glyph scale: character cells by lit columns and width, plain ones by width. */
interface ShadeStretches {
  readonly cells: (Stretch | undefined)[];
  readonly plain: Map<number, Stretch>;
}

/** By shade x 8 + scale: at most the palette's 12 shades and the band's, at two scales. */
const shadeCache = new Map<number, ShadeStretches>();

/** A character cell of a glyph row: five columns of `scale` pixels, white where `lit`, then a dark one when `columns` is 6. */
const cellStretch = (set: ShadeStretches, shade: number, scale: number, lit: number, columns: number): Stretch => {
  const hit = set.cells[lit * 8 + columns];
  if (hit !== undefined) return hit;
  const runs: number[] = [];
  for (let col = 0; col < columns; ) {
    const on = col < 5 && (lit & (1 << col)) !== 0;
    let end = col + 1;
    while (end < columns && (end < 5 && (lit & (1 << end)) !== 0) === on) end++;
    if (on) runs.push(255, 255, 255, (end - col) * scale);
    else runs.push(shade >> 16, (shade >> 8) & 255, shade & 255, (end - col) * scale);
    col = end;
  }
  return (set.cells[lit * 8 + columns] = makeStretch(runs));
};

/** n pixels of the shade. */
const plainStretch = (set: ShadeStretches, shade: number, pixels: number): Stretch => {
  let st = set.plain.get(pixels);
  if (st === undefined) {
    st = makeStretch([shade >> 16, (shade >> 8) & 255, shade & 255, pixels]);
    set.plain.set(pixels, st);
  }
  return st;
};

let pictureSeq = 0;

/**
 * The caption panel (rows 0 to its height) as raw deflate data flushed to a byte
 * boundary, and its Adler-32: what drawing the rows and compressing them gives, made from
 * the layout instead. A row equal to an earlier one (a glyph row repeats `scale` times,
 * the margins are all one colour) is a copy of it; in a glyph row each character cell is
 * a copy of the last cell with the same columns lit.
 */
function captionPanelDeflate(
  width: number,
  height: number,
  rgb: readonly [number, number, number],
  watermark: boolean,
  caption: readonly string[],
): { deflated: Uint8Array; adler: number } {
  const { scale, lineHeight, margin, shown, panelBottom } = captionLayout(width, height, caption);
  const stride = 1 + width * 3;
  const bandTop = Math.floor(height * 0.78);
  const bandBottom = Math.floor(height * 0.92);
  const cell = 6 * scale;
  const out = new FixedDeflateWriter(8192);
  const adler = adlerStart();
  /** Where the last copy of a row begins in the decoded data, by key. */
  const rowAt = new Map<number, number>();
  /** A row's own Adler-32 sums, by key. */
  const rowAdler = new Map<number, Adler>();
  // The panel's two shades (24-bit RGB): the picture's colour darkened, and the watermark band's.
  const shades = [((rgb[0] >> 2) << 16) | ((rgb[1] >> 2) << 8) | (rgb[2] >> 2), (63 << 16) | (63 << 8) | 63];
  const sets = shades.map((shade) => {
    let set = shadeCache.get(shade * 8 + scale);
    if (set === undefined) {
      set = { cells: [], plain: new Map() };
      if (shadeCache.size >= 256) shadeCache.clear();
      shadeCache.set(shade * 8 + scale, set);
    }
    return set;
  });
  const picture = ++pictureSeq;
  const stretches: Stretch[] = [];

  for (let y = 0; y < panelBottom; y++) {
    // Rows with the same key are equal: the shade, then the caption line and glyph row (or none).
    const band = watermark && y >= bandTop && y < bandBottom ? 1 : 0;
    const line = y >= margin ? Math.floor((y - margin) / lineHeight) : -1;
    const glyphRow = line >= 0 ? Math.floor((y - margin - line * lineHeight) / scale) : 8;
    const glyphs = line >= 0 && line < shown.length && glyphRow < 8;
    const key = glyphs ? band * 65536 + line * 8 + glyphRow : band * 65536 + 65535;
    const start = out.position;
    const seen = rowAt.get(key);
    rowAt.set(key, start);
    if (seen !== undefined && start - seen <= MAX_DISTANCE) {
      out.copy(stride, start - seen);
      adlerBlock(adler, rowAdler.get(key)!, stride);
      continue;
    }
    const shade = shades[band]!;
    const set = sets[band]!;
    stretches.length = 0;
    if (!glyphs) stretches.push(plainStretch(set, shade, width));
    else {
      const text = shown[line]!;
      stretches.push(plainStretch(set, shade, margin));
      let x = margin;
      for (let ci = 0; ci < text.length; ci++) {
        const code = text.charCodeAt(ci);
        const glyph = code >= 32 && code <= 126 ? (code - 32) * 5 : ("?".charCodeAt(0) - 32) * 5;
        if (x + 5 * scale > width) break;
        // The cell: five columns lit or not, then one dark column when it fits.
        const columns = x + cell <= width ? 6 : 5;
        let lit = 0;
        for (let col = 0; col < 5; col++) if (FONT[glyph + col]! & (1 << glyphRow)) lit |= 1 << col;
        stretches.push(cellStretch(set, shade, scale, lit, columns));
        x += columns * scale;
      }
      if (x < width) stretches.push(plainStretch(set, shade, width - x));
    }
    out.literal(0); // filter: none
    const own = adlerStart();
    adlerByte(own, 0);
    for (const st of stretches) {
      const seenHere = st.picture === picture;
      const at = st.at;
      const here = out.position;
      st.picture = picture;
      st.at = here;
      adlerBlock(own, st.adler, st.pixels * 3);
      if (seenHere && here - at <= MAX_DISTANCE) {
        out.copy(st.pixels * 3, here - at);
        continue;
      }
      for (let i = 0; i < st.runs.length; i += 4) {
        out.literal(st.runs[i]!);
        out.literal(st.runs[i + 1]!);
        out.literal(st.runs[i + 2]!);
        if (st.runs[i + 3]! > 1) out.copy((st.runs[i + 3]! - 1) * 3, 3);
      }
    }
    rowAdler.set(key, own);
    adlerBlock(adler, own, stride);
  }
  return { deflated: out.finish(), adler: adlerValue(adler) };
}

// ---------------------------------------------------------------- caption text

/**
 * The classic 5x7 font (ASCII 32..126), five columns per glyph, bit 0 the top row;
 * bit 7 is the descender row of g, j, p, q, y and the comma.
 */
const FONT = Uint8Array.from(
  (
    "0000000000 00005f0000 0007000700 147f147f14 242a7f2a12 2313086462 3649562050 0008070300 001c224100 0041221c00" +
    " 2a1c7f1c2a 08083e0808 0080703000 0808080808 0000606000 2010080402 3e5149453e 00427f4000 7249494946 214149" +
    "4d33 1814127f10 2745454539 3c4a494931 4121110907 3649494936 464949291e 0000140000 0040340000 0008142241" +
    " 1414141414 0041221408 0201590906 3e415d594e 7c1211127c 7f49494936 3e41414122 7f4141413e 7f49494941" +
    " 7f09090901 3e41415173 7f0808087f 00417f4100 2040413f01 7f08142241 7f40404040 7f021c027f 7f0408107f" +
    " 3e4141413e 7f09090906 3e4151215e 7f09192946 2649494932 03017f0103 3f4040403f 1f2040201f 3f4038403f" +
    " 6314081463 0304780403 6159494d43 007f414141 0204081020 004141417f 0402010204 4040404040 0003070800" +
    " 2054547840 7f28444438 3844444428 384444287f 3854545418 00087e0902 18a4a49c78 7f08040478 00447d4000" +
    " 2040403d00 7f10284400 00417f4000 7c0478047c 7c08040478 3844444438 fc18242418 18242418fc 7c08040408" +
    " 4854545424 04043f4424 3c4040207c 1c2040201c 3c4030403c 4428102844 4c9090907c 4464544c44 0008364100" +
    " 0000770000 0041360800 0201020402"
  )
    .replace(/\s+/g, "")
    .match(/../g)!
    .map((h) => parseInt(h, 16)),
);

/** Words of `text` in lines of at most `width` characters, at most `lines` lines (the last cut with "..."). */
export function wrapCaption(text: string, width: number, lines: number): string[] {
  const words = text.replace(/[^\x20-\x7e]/g, "?").split(/\s+/).filter((w) => w !== "");
  const out: string[] = [];
  let line = "";
  for (const word of words) {
    const w = word.length > width ? `${word.slice(0, width - 1)}-` : word;
    if (line === "") line = w;
    else if (line.length + 1 + w.length <= width) line = `${line} ${w}`;
    else {
      out.push(line);
      line = w;
      if (out.length === lines) break;
    }
  }
  if (out.length < lines && line !== "") out.push(line);
  if (out.length === lines && words.join(" ").length > out.join(" ").length) {
    const last = out[lines - 1]!;
    out[lines - 1] = `${last.slice(0, Math.max(0, width - 3))}...`;
  }
  return out;
}

/** Lines of `lines` that fit on a picture, and the height of the dark panel under them. */
function captionLayout(width: number, height: number, lines: readonly string[]) {
  const scale = width >= 400 ? 3 : 2;
  const lineHeight = 10 * scale;
  const margin = 4 * scale;
  const shown = lines.slice(0, Math.max(1, Math.floor((height * 0.6) / lineHeight)));
  return { scale, lineHeight, margin, shown, panelBottom: Math.min(height, margin * 2 + shown.length * lineHeight) };
}

/** Rows from the top that drawCaption changes: every glyph lies above it. */
const captionPanelHeight = (width: number, height: number, lines: readonly string[]): number => captionLayout(width, height, lines).panelBottom;

/**
 * White text at `scale` on a dark panel across the top of the picture. `raw` holds the
 * picture's rows from the top, at least the panel's (captionPanelHeight).
 */
function drawCaption(raw: Uint8Array, stride: number, width: number, height: number, lines: readonly string[]): void {
  const { panelBottom } = captionLayout(width, height, lines);
  for (let y = 0; y < panelBottom; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * stride + 1 + x * 3;
      raw[p] = raw[p]! >> 2;
      raw[p + 1] = raw[p + 1]! >> 2;
      raw[p + 2] = raw[p + 2]! >> 2;
    }
  }
  drawGlyphs(raw, stride, width, height, lines);
}

/** The caption's white glyphs, on a panel already darkened. */
function drawGlyphs(raw: Uint8Array, stride: number, width: number, height: number, lines: readonly string[]): void {
  const { scale, lineHeight, margin, shown, panelBottom } = captionLayout(width, height, lines);
  shown.forEach((text, li) => {
    const top = margin + li * lineHeight;
    for (let ci = 0; ci < text.length; ci++) {
      const code = text.charCodeAt(ci);
      const glyph = code >= 32 && code <= 126 ? (code - 32) * 5 : ("?".charCodeAt(0) - 32) * 5;
      const left = margin + ci * 6 * scale;
      if (left + 5 * scale > width) break;
      for (let col = 0; col < 5; col++) {
        const bits = FONT[glyph + col]!;
        for (let row = 0; row < 8; row++) {
          if (!(bits & (1 << row))) continue;
          for (let dy = 0; dy < scale; dy++) {
            const y = top + row * scale + dy;
            if (y >= panelBottom) continue;
            for (let dx = 0; dx < scale; dx++) {
              const p = y * stride + 1 + (left + col * scale + dx) * 3;
              raw[p] = 255;
              raw[p + 1] = 255;
              raw[p + 2] = 255;
            }
          }
        }
      }
    }
  });
}

/** The caption of image `index` (0-based) of `count` for `prompt`: its first words, then which image. */
export function imageCaption(prompt: string, index: number, count: number, aspectRatio: string): string[] {
  const [width] = IMAGE_OUTPUT_SIZES[aspectRatio] ?? IMAGE_OUTPUT_SIZES["1:1"]!;
  const scale = width >= 400 ? 3 : 2;
  const chars = Math.floor((width - 8 * scale) / (6 * scale));
  return [...wrapCaption(prompt, chars, 5), ...(count > 1 ? [`image ${index + 1} of ${count}`] : [])];
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

// ---------------------------------------------------------------- videos

/**
 * Two levels below the package root both as src/emulator/OutputMedia.ts and as the
 * compiled dist/emulator/OutputMedia.js, so this finds the shipped assets from either.
 */
const MEDIA_DIR = new URL("../../src/emulator/media/", import.meta.url);
export const VIDEO_OUTPUT_SIZES: Readonly<Record<OutputVideoRatio, readonly [number, number]>> = {
  "16:9": [1280, 720],
  "9:16": [720, 1280],
  "1:1": [720, 720],
};
export const VIDEO_OUTPUT_FPS = 24;
const videoCache = new Map<string, Uint8Array>();

/**
 * An MP4 (H.264, 24 fps, one colour) of the requested ratio and duration; durations
 * are rounded and held to the service's 3..10 s. The watermarked copy has a white band.
 */
export function videoOutput(opts: { aspectRatio: OutputVideoRatio; durationSec: number; watermark: boolean }): Uint8Array {
  const ratio = opts.aspectRatio in VIDEO_OUTPUT_SIZES ? opts.aspectRatio : "16:9";
  const seconds = Math.min(10, Math.max(3, Math.round(Number.isFinite(opts.durationSec) ? opts.durationSec : 5)));
  const name = `video_${ratio.replace(":", "x")}_${seconds}s${opts.watermark ? "_wm" : ""}.mp4`;
  let data = videoCache.get(name);
  if (data === undefined) {
    data = new Uint8Array(readFileSync(new URL(name, MEDIA_DIR)));
    videoCache.set(name, data);
  }
  return data;
}

// ---------------------------------------------------------------- audio

const audioCache = new Map<string, Uint8Array>();
const AUDIO_CACHE_LIMIT = 64;

/**
 * Silent audio of about `durationSec` (held to 0..600 s): WAV as 8 kHz 8-bit mono PCM;
 * MP3 as MPEG-1 Layer III frames at 48 kHz, 32 kbit/s mono, whose side information is all
 * zero (a frame every decoder reads as 24 ms of silence).
 */
export function audioOutput(kind: "mp3" | "wav", durationSec: number): Uint8Array {
  const seconds = Math.min(600, Math.max(0, Number.isFinite(durationSec) ? durationSec : 0));
  const key = `${kind}:${seconds}`;
  let data = audioCache.get(key);
  if (data === undefined) {
    data = kind === "wav" ? silentWav(seconds) : silentMp3(seconds);
    if (audioCache.size >= AUDIO_CACHE_LIMIT) audioCache.clear();
    audioCache.set(key, data);
  }
  return data;
}

function silentWav(seconds: number): Uint8Array {
  const rate = 8000;
  const samples = Math.round(seconds * rate);
  const out = new Uint8Array(44 + samples);
  const v = new DataView(out.buffer);
  const ascii = (o: number, s: string) => [...s].forEach((c, i) => (out[o + i] = c.charCodeAt(0)));
  ascii(0, "RIFF");
  v.setUint32(4, 36 + samples, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, rate, true);
  v.setUint32(28, rate, true); // bytes per second
  v.setUint16(32, 1, true); // block align
  v.setUint16(34, 8, true); // bits per sample
  ascii(36, "data");
  v.setUint32(40, samples, true);
  out.fill(0x80, 44); // 8-bit PCM is unsigned: 128 is silence
  return out;
}

const MP3_FRAME_BYTES = 96; // 144 * 32000 / 48000
const MP3_FRAME_SEC = 1152 / 48000;

function silentMp3(seconds: number): Uint8Array {
  const frames = Math.max(1, Math.round(seconds / MP3_FRAME_SEC));
  const out = new Uint8Array(frames * MP3_FRAME_BYTES);
  for (let f = 0; f < frames; f++) {
    // sync + MPEG-1 + Layer III + no CRC; 32 kbit/s, 48 kHz, no padding; mono.
    out.set([0xff, 0xfb, 0x14, 0xc0], f * MP3_FRAME_BYTES);
  }
  return out;
}
