// Round trip of the emulator's result files through the probes: images and videos come
// back at the requested ratio and duration, decodable, and valid as inputs of a later
// task; watermarked copies differ visibly; audio has the requested length.

import { inflateSync } from "node:zlib";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { audioOutput, imageCaption, imageOutput, videoOutput, wrapCaption } from "../../src/emulator/OutputMedia.js";
import { checkImageMedia, checkVideoMedia, probeImage, probeVideo } from "../../src/rules/index.js";

const IMAGE_RATIOS: Array<[string, number, number]> = [
  ["16:9", 16, 9],
  ["9:16", 9, 16],
  ["1:1", 1, 1],
  ["4:3", 4, 3],
  ["3:4", 3, 4],
  ["3:2", 3, 2],
  ["2:3", 2, 3],
  ["21:9", 21, 9],
  ["auto", 1, 1],
];

/** Decodes an 8-bit RGB PNG without filters (what imageOutput writes) to its rows. */
function rows(png: Uint8Array): { width: number; height: number; pixel: (x: number, y: number) => number[] } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const idat: Uint8Array[] = [];
  let width = 0;
  let height = 0;
  for (let o = 8; o < png.length; ) {
    const len = view.getUint32(o);
    const type = String.fromCharCode(...png.subarray(o + 4, o + 8));
    if (type === "IHDR") {
      width = view.getUint32(o + 8);
      height = view.getUint32(o + 12);
    }
    if (type === "IDAT") idat.push(png.subarray(o + 8, o + 8 + len));
    o += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  assert.is(raw.length, height * (1 + width * 3));
  return { width, height, pixel: (x, y) => [...raw.subarray(y * (1 + width * 3) + 1 + x * 3, y * (1 + width * 3) + 4 + x * 3)] };
}

test("imageOutput gives a PNG of the exact requested ratio that passes the input rules", () => {
  for (const [ratio, a, b] of IMAGE_RATIOS) {
    for (const watermark of [false, true]) {
      const info = probeImage(imageOutput({ aspectRatio: ratio, watermark, seed: 3 }));
      assert.is(info.kind, "image", ratio);
      if (info.kind !== "image") continue;
      assert.is(info.format, "png");
      assert.is(info.width * b, info.height * a, `${ratio}: ${info.width}x${info.height}`);
      assert.equal(checkImageMedia(info, "image", "f"), [], ratio);
      assert.equal(checkImageMedia(info, "video", "f"), [], ratio);
    }
  }
});

test("the watermarked image has a white band the plain one lacks", () => {
  const plain = rows(imageOutput({ aspectRatio: "16:9", watermark: false, seed: 1 }));
  const marked = rows(imageOutput({ aspectRatio: "16:9", watermark: true, seed: 1 }));
  const y = Math.floor(marked.height * 0.85);
  assert.equal(marked.pixel(10, y), [255, 255, 255]);
  assert.not.equal(plain.pixel(10, y), [255, 255, 255]);
  assert.equal(marked.pixel(10, 0), plain.pixel(10, 0), "same picture outside the band");
});

test("different seeds give different bytes; the same seed gives the same bytes", () => {
  const a = imageOutput({ aspectRatio: "1:1", watermark: false, seed: 1 });
  const b = imageOutput({ aspectRatio: "1:1", watermark: false, seed: 13 });
  assert.not.equal(a, b);
  assert.equal(imageOutput({ aspectRatio: "1:1", watermark: false, seed: 1 }), a);
});

test("videoOutput gives an MP4 of the requested ratio and whole duration at 24 fps, valid as a reference video", () => {
  const sizes = { "16:9": [1280, 720], "9:16": [720, 1280], "1:1": [720, 720] } as const;
  for (const ratio of ["16:9", "9:16", "1:1"] as const) {
    for (let d = 3; d <= 10; d++) {
      const plain = videoOutput({ aspectRatio: ratio, durationSec: d, watermark: false });
      const marked = videoOutput({ aspectRatio: ratio, durationSec: d, watermark: true });
      assert.not.equal(plain, marked);
      for (const data of [plain, marked]) {
        const info = probeVideo(data);
        assert.equal(info, {
          kind: "video",
          container: "mp4",
          width: sizes[ratio][0],
          height: sizes[ratio][1],
          durationSec: d,
          fps: 24,
          bytes: data.length,
        });
        if (info.kind === "video") assert.equal(checkVideoMedia(info, "f"), []);
      }
    }
  }
});

test("videoOutput rounds durations and holds them to 3..10 s", () => {
  const seconds = (durationSec: number) => {
    const info = probeVideo(videoOutput({ aspectRatio: "1:1", durationSec, watermark: false }));
    return info.kind === "video" ? info.durationSec : NaN;
  };
  assert.is(seconds(5.4), 5);
  assert.is(seconds(1), 3);
  assert.is(seconds(15), 10);
});

test("the committed output videos stay small", () => {
  let total = 0;
  for (const ratio of ["16:9", "9:16", "1:1"] as const)
    for (let d = 3; d <= 10; d++)
      for (const watermark of [false, true]) total += videoOutput({ aspectRatio: ratio, durationSec: d, watermark }).length;
  assert.ok(total < 300 * 1024, `${total} bytes`);
});

test("audioOutput: a WAV header with the exact sample count, and MP3 frames of 24 ms", () => {
  const wav = audioOutput("wav", 3);
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  assert.is(String.fromCharCode(...wav.subarray(0, 4)), "RIFF");
  assert.is(String.fromCharCode(...wav.subarray(8, 12)), "WAVE");
  assert.is(view.getUint32(24, true), 8000);
  assert.is(view.getUint32(40, true), 24000);
  assert.is(wav.length, 44 + 24000);

  const mp3 = audioOutput("mp3", 3);
  assert.is(mp3.length, 125 * 96, "3 s = 125 frames of 1152 samples at 48 kHz");
  for (let o = 0; o < mp3.length; o += 96) assert.equal([...mp3.subarray(o, o + 4)], [0xff, 0xfb, 0x14, 0xc0]);
});

test("a captioned image shows its text: white glyph pixels on a dark panel at the top, the rest as before; deterministic, small, a valid input", () => {
  const caption = imageCaption("Acme ceramic mug on a plain table, studio light", 0, 2, "1:1");
  assert.equal(caption, ["Acme ceramic mug on a", "plain table, studio light", "image 1 of 2"]);
  const png = imageOutput({ aspectRatio: "1:1", watermark: false, seed: 1, caption });
  assert.equal(png, imageOutput({ aspectRatio: "1:1", watermark: false, seed: 1, caption }));
  assert.ok(png.length < 8_000, `${png.length} bytes`);
  assert.equal(checkImageMedia(probeImage(png) as never, "image", "image"), []);
  const plain = rows(imageOutput({ aspectRatio: "1:1", watermark: false, seed: 1 }));
  const img = rows(png);
  let white = 0;
  let dark = 0;
  for (let y = 0; y < 100; y++) {
    for (let x = 0; x < 320; x++) {
      const p = img.pixel(x, y);
      if (p.every((c) => c === 255)) white++;
      else if (p.every((c, i) => c === plain.pixel(x, y)[i]! >> 2)) dark++;
    }
  }
  assert.ok(white > 500, `${white} text pixels`);
  assert.ok(dark > 10_000, `${dark} panel pixels`);
  // Below the panel the picture is the plain one.
  for (const y of [200, 300]) assert.equal(img.pixel(10, y), plain.pixel(10, y));
  // Another prompt, other bytes: the file tells which task made it.
  assert.not.equal(png, imageOutput({ aspectRatio: "1:1", watermark: false, seed: 1, caption: imageCaption("Acme oak chair", 0, 2, "1:1") }));
});

test("wrapCaption: words in lines, long words cut, the last line marked when text is left over, non-ASCII shown as ?", () => {
  assert.equal(wrapCaption("one two three four", 9, 5), ["one two", "three", "four"]);
  assert.equal(wrapCaption("abcdefghijklmnop", 5, 2), ["abcd-"]);
  assert.equal(wrapCaption("aa bb cc dd ee ff", 5, 2), ["aa bb", "cc..."]);
  assert.equal(wrapCaption("caf\u00e9", 10, 1), ["caf?"]);
});

test.run();
