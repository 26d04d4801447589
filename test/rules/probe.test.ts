// Media probing on every committed fixture (exact sizes, durations, frame rates), on
// moov-at-the-end files through probeVideoHeader, and on garbage, truncated and
// corrupted input, which must never throw.

import { readFileSync, readdirSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { probeImage, probeVideo, probeVideoHeader } from "../../src/rules/index.js";

const DIR = new URL("../fixtures/media/", import.meta.url);
const load = (name: string) => new Uint8Array(readFileSync(new URL(name, DIR)));

const IMAGES: Array<[string, number, number]> = [
  ["img_299x299", 299, 299],
  ["img_300x300", 300, 300],
  ["img_750x300", 750, 300],
  ["img_780x300", 780, 300],
  ["img_300x750", 300, 750],
  ["img_300x780", 300, 780],
];

/** name, width, height, duration (s), fps: as ffprobe reads them (fixtures README). */
const VIDEOS: Array<[string, number, number, number, number]> = [
  ["vid_700x700_3s_24fps", 700, 700, 3, 24],
  ["vid_699x700_3s_24fps", 699, 700, 3, 24],
  ["vid_700x699_3s_24fps", 700, 699, 3, 24],
  ["vid_2160x700_3s_24fps", 2160, 700, 3, 24],
  ["vid_2161x700_3s_24fps", 2161, 700, 3, 24],
  ["vid_700x700_2.9s_24fps", 700, 700, 2.917, 24],
  ["vid_700x700_10s_24fps", 700, 700, 10, 24],
  ["vid_700x700_10.1s_24fps", 700, 700, 10.125, 24],
  ["vid_700x700_3s_23fps", 700, 700, 3, 23],
  ["vid_700x700_3s_60fps", 700, 700, 3, 60],
  ["vid_700x700_3s_61fps", 700, 700, 3, 61],
];

test("every PNG and JPEG fixture probes to its exact format, size and byte count", () => {
  for (const [name, width, height] of IMAGES) {
    for (const [ext, format] of [["png", "png"], ["jpg", "jpeg"]] as const) {
      const data = load(`${name}.${ext}`);
      assert.equal(probeImage(data), { kind: "image", format, width, height, bytes: data.length }, `${name}.${ext}`);
    }
  }
});

test("a progressive JPEG (SOF2) probes like a baseline one", () => {
  const data = load("img_300x300_progressive.jpg");
  assert.equal(probeImage(data), { kind: "image", format: "jpeg", width: 300, height: 300, bytes: data.length });
});

test("a truncated PNG and a text file are unreadable as images", () => {
  const truncated = probeImage(load("img_truncated.png"));
  assert.is(truncated.kind, "unreadable");
  assert.match((truncated as { reason: string }).reason, /truncated PNG/);
  assert.equal(probeImage(load("not_media.txt")), { kind: "unreadable", reason: "not a PNG or JPEG file" });
});

test("every MP4 and MOV fixture probes to its exact container, size, duration and frame rate", () => {
  for (const [name, width, height, durationSec, fps] of VIDEOS) {
    for (const container of ["mp4", "mov"] as const) {
      const data = load(`${name}.${container}`);
      assert.equal(
        probeVideo(data),
        { kind: "video", container, width, height, durationSec, fps, bytes: data.length },
        `${name}.${container}`,
      );
    }
  }
});

test("images are not videos and videos are not images", () => {
  assert.equal(probeVideo(load("img_300x300.png")), { kind: "unreadable", reason: "not an MP4 or MOV file" });
  assert.equal(probeImage(load("vid_700x700_3s_24fps.mp4")), { kind: "unreadable", reason: "not a PNG or JPEG file" });
  assert.equal(probeVideo(load("not_media.txt")), { kind: "unreadable", reason: "not an MP4 or MOV file" });
});

// ---------------------------------------------------------------- probeVideoHeader

const reader = (data: Uint8Array) => {
  let bytesRead = 0;
  const readAt = async (offset: number, length: number) => {
    const part = data.subarray(offset, offset + length);
    bytesRead += part.length;
    return part;
  };
  return { readAt, read: () => bytesRead };
};

/** Rewrites a faststart file as ftyp, mdat, moov: moov at the end, as cameras write it. */
function moovLast(data: Uint8Array): Uint8Array {
  const boxes: Array<[string, Uint8Array]> = [];
  for (let o = 0; o < data.length; ) {
    const size = new DataView(data.buffer, data.byteOffset + o).getUint32(0);
    boxes.push([String.fromCharCode(...data.subarray(o + 4, o + 8)), data.subarray(o, o + size)]);
    o += size;
  }
  const order = (t: string) => (t === "ftyp" ? 0 : t === "moov" ? 2 : 1);
  boxes.sort((a, b) => order(a[0]) - order(b[0]));
  const out = new Uint8Array(data.length);
  let o = 0;
  for (const [, box] of boxes) {
    out.set(box, o);
    o += box.length;
  }
  return out;
}

test("probeVideoHeader gives probeVideo's answer for every video fixture, reading only headers and moov", async () => {
  for (const [name] of VIDEOS) {
    for (const ext of ["mp4", "mov"]) {
      const data = load(`${name}.${ext}`);
      const r = reader(data);
      assert.equal(await probeVideoHeader(r.readAt, data.length), probeVideo(data), `${name}.${ext}`);
      assert.ok(r.read() < data.length, `${name}.${ext}: read ${r.read()} of ${data.length} bytes`);
    }
  }
});

test("a file with moov after mdat probes the same, whole or through probeVideoHeader", async () => {
  const data = load("vid_700x700_10s_24fps.mp4");
  const moved = moovLast(data);
  assert.not.equal(moved, data);
  const expected = { kind: "video", container: "mp4", width: 700, height: 700, durationSec: 10, fps: 24, bytes: data.length };
  assert.equal(probeVideo(moved), expected);
  assert.equal(await probeVideoHeader(reader(moved).readAt, moved.length), expected);
});

test("probeVideoHeader copes with a reader that returns more than asked (a server ignoring Range)", async () => {
  const data = moovLast(load("vid_700x700_3s_60fps.mp4"));
  const greedy = async (offset: number) => data.subarray(offset);
  assert.equal(await probeVideoHeader(greedy, data.length), probeVideo(data));
});

test("probeVideoHeader reports a moov cut short and a read failure without throwing", async () => {
  const moved = moovLast(load("vid_700x700_3s_24fps.mov"));
  const cut = moved.subarray(0, moved.length - 10);
  assert.is((await probeVideoHeader(reader(cut).readAt, cut.length)).kind, "unreadable");
  const failing = async () => {
    throw new Error("disk gone");
  };
  assert.equal(await probeVideoHeader(failing, 1000), { kind: "unreadable", reason: "unreadable video data" });
});

// ---------------------------------------------------------------- damage

/** Deterministic pseudo-random bytes (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test("every strict prefix of an image or video fixture is unreadable, and probing never throws", () => {
  for (const name of ["img_300x300.png", "img_300x300.jpg", "img_300x300_progressive.jpg"]) {
    const data = load(name);
    for (let n = 0; n < data.length; n++) assert.is(probeImage(data.subarray(0, n)).kind, "unreadable", `${name}[0..${n})`);
  }
  for (const name of ["vid_700x700_3s_24fps.mp4", "vid_700x700_3s_24fps.mov"]) {
    const data = load(name);
    for (let n = 0; n < data.length; n++) assert.is(probeVideo(data.subarray(0, n)).kind, "unreadable", `${name}[0..${n})`);
  }
});

test("random garbage, with or without a valid signature, never throws and is unreadable", () => {
  const next = random(42);
  const prefixes = [
    [],
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    [0xff, 0xd8, 0xff],
    [0, 0, 0, 24, 0x66, 0x74, 0x79, 0x70], // ftyp
    [0, 0, 0, 1, 0x6d, 0x6f, 0x6f, 0x76], // moov with a 64-bit size
  ];
  for (let i = 0; i < 2000; i++) {
    const prefix = prefixes[i % prefixes.length]!;
    const data = new Uint8Array(prefix.length + Math.floor(next() * 300));
    data.set(prefix);
    for (let j = prefix.length; j < data.length; j++) data[j] = Math.floor(next() * 256);
    assert.is(probeImage(data).kind, "unreadable");
    assert.is(probeVideo(data).kind, "unreadable");
  }
});

test("fixtures with random bytes overwritten never make a probe throw", () => {
  const next = random(7);
  for (const name of ["img_300x300.png", "img_300x300_progressive.jpg", "vid_700x700_3s_24fps.mp4", "vid_700x700_3s_60fps.mov"]) {
    const original = load(name);
    for (let i = 0; i < 300; i++) {
      const data = original.slice();
      for (let k = 0; k < 4; k++) data[Math.floor(next() * data.length)] = Math.floor(next() * 256);
      const image = probeImage(data);
      const video = probeVideo(data);
      assert.ok(image.kind === "image" || image.kind === "unreadable");
      assert.ok(video.kind === "video" || video.kind === "unreadable");
      if (video.kind === "video") assert.ok(Number.isFinite(video.fps) && Number.isFinite(video.durationSec));
    }
  }
});

test("a box whose size points past the end of the file is reported as truncated", () => {
  const data = load("vid_700x700_3s_24fps.mp4").slice();
  new DataView(data.buffer).setUint32(0, 0x7fffffff); // ftyp claims 2 GB
  assert.equal(probeVideo(data), { kind: "unreadable", reason: "truncated file: ftyp box cut short" });
});

test("the fixtures folder holds no file the tests do not know", () => {
  const known = new Set([
    ...IMAGES.flatMap(([n]) => [`${n}.png`, `${n}.jpg`]),
    ...VIDEOS.flatMap(([n]) => [`${n}.mp4`, `${n}.mov`]),
    "img_300x300_progressive.jpg",
    "img_truncated.png",
    "not_media.txt",
    "make.sh",
    "README.md",
  ]);
  assert.equal(readdirSync(DIR).filter((f) => !known.has(f)), []);
});

test.run();
