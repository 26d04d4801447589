// Reads container, pixel size, duration and frame rate of an MP4 or MOV file by walking
// its ISO-BMFF / QuickTime boxes, in pure JavaScript (no ffprobe). Only box headers,
// `ftyp` and `moov` are needed, so probeVideoHeader can read a large file in pieces
// (moov may sit at its end). Never throws: damaged input gives a ProbeFailure.

import type { ProbeFailure, VideoInfo } from "./MediaInfo.js";

export type { ProbeFailure, VideoInfo } from "./MediaInfo.js";

const fail = (reason: string): ProbeFailure => ({ kind: "unreadable", reason });

/** Boxes a file may start with; anything else is not an MP4/MOV. */
const FIRST_BOXES = new Set(["ftyp", "moov", "mdat", "free", "skip", "wide", "pnot", "uuid"]);
/** moov of a 10 s clip is kilobytes; this bound only stops absurd headers. */
const MAX_MOOV_BYTES = 64 * 1024 * 1024;
const MAX_TOP_LEVEL_BOXES = 100_000;

export function probeVideo(data: Uint8Array): VideoInfo | ProbeFailure {
  try {
    let ftyp: Uint8Array | undefined;
    let moov: Uint8Array | undefined;
    let o = 0;
    let count = 0;
    while (o < data.length) {
      const h = readHeader(data.subarray(o, o + 16), o, data.length);
      if (typeof h === "string") return fail(h);
      if (count === 0 && !FIRST_BOXES.has(h.type)) return fail("not an MP4 or MOV file");
      if (h.end > data.length) return fail(`truncated file: ${h.type} box cut short`);
      if (h.type === "ftyp" && ftyp === undefined) ftyp = data.subarray(o + h.headerSize, h.end);
      if (h.type === "moov" && moov === undefined) moov = data.subarray(o + h.headerSize, h.end);
      o = h.end;
      if (++count > MAX_TOP_LEVEL_BOXES) return fail("too many boxes");
    }
    return describeMovie(ftyp, moov, data.length);
  } catch {
    return fail("unreadable video data");
  }
}

/**
 * Same answer as probeVideo, reading only box headers, `ftyp` and `moov` through
 * `readAt(offset, length)` (which may return fewer bytes at the end of the file).
 */
export async function probeVideoHeader(
  readAt: (offset: number, length: number) => Promise<Uint8Array>,
  size: number,
): Promise<VideoInfo | ProbeFailure> {
  try {
    let ftyp: Uint8Array | undefined;
    let moov: Uint8Array | undefined;
    let o = 0;
    let count = 0;
    while (o < size) {
      const h = readHeader(await readAt(o, Math.min(16, size - o)), o, size);
      if (typeof h === "string") return fail(h);
      if (count === 0 && !FIRST_BOXES.has(h.type)) return fail("not an MP4 or MOV file");
      if (h.end > size) return fail(`truncated file: ${h.type} box cut short`);
      const bodyLength = h.end - o - h.headerSize;
      if ((h.type === "ftyp" && ftyp === undefined) || (h.type === "moov" && moov === undefined)) {
        if (bodyLength > MAX_MOOV_BYTES) return fail(`${h.type} box too large`);
        // A reader may hand back more than asked (a server ignoring Range): keep the box only.
        const body = (await readAt(o + h.headerSize, bodyLength)).subarray(0, bodyLength);
        if (body.length < bodyLength) return fail(`truncated file: ${h.type} box cut short`);
        if (h.type === "ftyp") ftyp = body;
        else moov = body;
      }
      o = h.end;
      if (++count > MAX_TOP_LEVEL_BOXES) return fail("too many boxes");
    }
    return describeMovie(ftyp, moov, size);
  } catch {
    return fail("unreadable video data");
  }
}

// ---------------------------------------------------------------- boxes

interface Header {
  readonly type: string;
  readonly headerSize: number;
  /** Absolute end offset of the box. */
  readonly end: number;
}

const u32 = (d: Uint8Array, o: number) => ((d[o]! << 24) | (d[o + 1]! << 16) | (d[o + 2]! << 8) | d[o + 3]!) >>> 0;
const u16 = (d: Uint8Array, o: number) => (d[o]! << 8) | d[o + 1]!;
const u64 = (d: Uint8Array, o: number) => u32(d, o) * 2 ** 32 + u32(d, o + 4);
const fourcc = (d: Uint8Array, o: number) => String.fromCharCode(d[o]!, d[o + 1]!, d[o + 2]!, d[o + 3]!);

/** Parses a box header found at absolute offset `at` in a parent ending at `parentEnd`. */
function readHeader(h: Uint8Array, at: number, parentEnd: number): Header | string {
  if (h.length < 8) return "truncated file: box header cut short";
  const type = fourcc(h, 4);
  if (!/^[\x20-\x7e]{4}$/.test(type)) return "not an MP4 or MOV file";
  let size = u32(h, 0);
  let headerSize = 8;
  if (size === 1) {
    if (h.length < 16) return "truncated file: box header cut short";
    size = u64(h, 8);
    headerSize = 16;
  } else if (size === 0) {
    size = parentEnd - at; // the box runs to the end of its parent
  }
  if (size < headerSize) return `damaged ${type} box: size ${size}`;
  return { type, headerSize, end: at + size };
}

/** The direct children of a box body, as [type, body] pairs; stops at damage. */
function children(body: Uint8Array): Array<[string, Uint8Array]> {
  const out: Array<[string, Uint8Array]> = [];
  let o = 0;
  while (o + 8 <= body.length && out.length < 10_000) {
    const h = readHeader(body.subarray(o, o + 16), o, body.length);
    if (typeof h === "string" || h.end > body.length) break;
    out.push([h.type, body.subarray(o + h.headerSize, h.end)]);
    o = h.end;
  }
  return out;
}

const child = (body: Uint8Array | undefined, type: string): Uint8Array | undefined =>
  body === undefined ? undefined : children(body).find(([t]) => t === type)?.[1];

// ---------------------------------------------------------------- movie

interface Track {
  readonly handler: string;
  readonly width: number;
  readonly height: number;
  readonly timescale: number;
  readonly duration: number;
  readonly samples: number;
  readonly sampleTicks: number;
  /** Largest chunk offset (stco / co64): where the track's last media data starts. */
  readonly lastChunkOffset: number;
}

function describeMovie(ftyp: Uint8Array | undefined, moov: Uint8Array | undefined, bytes: number): VideoInfo | ProbeFailure {
  if (moov === undefined) return fail(ftyp === undefined ? "not an MP4 or MOV file" : "no movie header (moov box)");
  // QuickTime files name themselves 'qt  '; very old ones carry no ftyp at all.
  const container = ftyp === undefined || (ftyp.length >= 4 && fourcc(ftyp, 0) === "qt  ") ? "mov" : "mp4";

  const tracks = children(moov)
    .filter(([t]) => t === "trak")
    .map(([, trak]) => readTrack(trak));
  const video = tracks.find((t) => t?.handler === "vide");
  if (video === undefined) return fail("no video track");
  if (video.width === 0 || video.height === 0) return fail("video track without a picture size");

  const mvhd = child(moov, "mvhd");
  let durationSec = 0;
  if (mvhd !== undefined && mvhd.length >= 20) {
    const v1 = mvhd[0] === 1;
    const timescale = v1 ? u32(mvhd, 20) : u32(mvhd, 12);
    const duration = v1 ? (mvhd.length >= 32 ? u64(mvhd, 24) : 0) : u32(mvhd, 16);
    if (timescale > 0) durationSec = duration / timescale;
  }
  if (durationSec === 0 && video.timescale > 0) durationSec = video.duration / video.timescale;
  if (!(durationSec > 0)) return fail("no duration (fragmented or empty movie)");

  const mediaTicks = video.sampleTicks > 0 ? video.sampleTicks : video.duration;
  // A file cut exactly after moov still has whole boxes; its chunk offsets give it away.
  if (video.lastChunkOffset >= bytes) return fail("truncated file: media data missing");
  if (video.samples === 0 || mediaTicks === 0 || video.timescale === 0) return fail("video track without frames");
  const fps = (video.samples * video.timescale) / mediaTicks;

  return { kind: "video", container, width: video.width, height: video.height, durationSec, fps, bytes };
}

function readTrack(trak: Uint8Array): Track | undefined {
  const mdia = child(trak, "mdia");
  const hdlr = child(mdia, "hdlr");
  if (hdlr === undefined || hdlr.length < 12) return undefined;
  const handler = fourcc(hdlr, 8);

  let width = 0;
  let height = 0;
  const tkhd = child(trak, "tkhd");
  if (tkhd !== undefined) {
    const at = tkhd[0] === 1 ? 88 : 76;
    if (tkhd.length >= at + 8) {
      // 16.16 fixed point: the presentation size.
      width = Math.round(u32(tkhd, at) / 65536);
      height = Math.round(u32(tkhd, at + 4) / 65536);
    }
  }

  let timescale = 0;
  let duration = 0;
  const mdhd = child(mdia, "mdhd");
  if (mdhd !== undefined && mdhd.length >= 20) {
    const v1 = mdhd[0] === 1;
    timescale = v1 ? u32(mdhd, 20) : u32(mdhd, 12);
    duration = v1 ? (mdhd.length >= 32 ? u64(mdhd, 24) : 0) : u32(mdhd, 16);
  }

  const stbl = child(child(mdia, "minf"), "stbl");
  const stsd = child(stbl, "stsd");
  // Visual sample entry: 8 bytes of box header, 8 of SampleEntry, 16 reserved, then size.
  if ((width === 0 || height === 0) && stsd !== undefined && stsd.length >= 8 + 36) {
    width = u16(stsd, 8 + 32);
    height = u16(stsd, 8 + 34);
  }

  let samples = 0;
  let sampleTicks = 0;
  const stts = child(stbl, "stts");
  if (stts !== undefined && stts.length >= 8) {
    const entries = Math.min(u32(stts, 4), Math.floor((stts.length - 8) / 8));
    for (let i = 0; i < entries; i++) {
      const count = u32(stts, 8 + i * 8);
      samples += count;
      sampleTicks += count * u32(stts, 12 + i * 8);
    }
  }
  let lastChunkOffset = 0;
  const stco = child(stbl, "stco");
  const co64 = child(stbl, "co64");
  const offsets = stco ?? co64;
  if (offsets !== undefined && offsets.length >= 8) {
    const wide = stco === undefined;
    const step = wide ? 8 : 4;
    const entries = Math.min(u32(offsets, 4), Math.floor((offsets.length - 8) / step));
    for (let i = 0; i < entries; i++) {
      const at = 8 + i * step;
      lastChunkOffset = Math.max(lastChunkOffset, wide ? u64(offsets, at) : u32(offsets, at));
    }
  }
  return { handler, width, height, timescale, duration, samples, sampleTicks, lastChunkOffset };
}
