// Captioned result images are assembled from a freshly compressed caption panel and the
// cached rows under it (OutputMedia.captionedIdat): the file must decode, checksum
// included, to exactly the pixels drawn whole, for every size, watermark and caption
// length, and the Adler-32 pieces must agree with zlib's own.

import { deflateSync, inflateSync } from "node:zlib";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { adler32, adler32Combine, IMAGE_OUTPUT_SIZES, imageCaption, imageOutput, imagePixels } from "../../src/emulator/OutputMedia.js";
import { Prng } from "../../src/emulator/Prng.js";

/** The IDAT payload of a PNG, joined. */
const idatOf = (png: Uint8Array): Buffer => {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const parts: Uint8Array[] = [];
  for (let o = 8; o < png.length; ) {
    const len = view.getUint32(o);
    if (String.fromCharCode(...png.subarray(o + 4, o + 8)) === "IDAT") parts.push(png.subarray(o + 8, o + 8 + len));
    o += 12 + len;
  }
  return Buffer.concat(parts);
};

const zlibAdler = (data: Uint8Array): number => {
  const z = deflateSync(data, { level: 1 });
  return z.readUInt32BE(z.length - 4);
};

test("adler32 and adler32Combine agree with zlib's checksum, lengths past 65521 and empty parts included", () => {
  const prng = new Prng(7);
  const data = new Uint8Array(200_000).map(() => prng.int(0, 255));
  for (const at of [0, 1, 5552, 65_521, 65_522, 131_042, 199_999, 200_000]) {
    const a = data.subarray(0, at);
    const b = data.subarray(at);
    assert.is(adler32(a), zlibAdler(a), `adler32 of ${at} bytes`);
    assert.is(adler32Combine(adler32(a), zlibAdler(b), b.length), zlibAdler(data), `split at ${at}`);
  }
  assert.is(adler32(new Uint8Array(100_000).fill(255)), zlibAdler(new Uint8Array(100_000).fill(255)), "largest sums");
});

test("a captioned image decodes (checksum checked by inflate) to the pixels drawn whole: every ratio, watermark, caption length", () => {
  const prompts = ["x", "a lighthouse at dusk", "bench still 12-345, a lighthouse at dusk", "word ".repeat(80)];
  for (const ratio of [...Object.keys(IMAGE_OUTPUT_SIZES), "auto"]) {
    for (const watermark of [false, true]) {
      for (const [i, prompt] of prompts.entries()) {
        for (const count of [1, 9]) {
          const caption = imageCaption(prompt, count - 1, count, ratio);
          const opts = { aspectRatio: ratio, watermark, seed: i * 5 + count, caption };
          const png = imageOutput(opts);
          const raw = inflateSync(idatOf(png));
          assert.ok(Buffer.compare(raw, Buffer.from(imagePixels(opts))) === 0, `${ratio} wm=${watermark} ${caption.length} lines`);
          assert.equal(png, imageOutput(opts), "the same bytes a second time (rows under the panel from the cache)");
        }
      }
    }
  }
});

test("a caption longer than fits: only the lines that fit are drawn, still exact", () => {
  const caption = Array.from({ length: 40 }, (_, i) => `line ${i}`);
  const opts = { aspectRatio: "16:9", watermark: true, seed: 3, caption };
  assert.ok(Buffer.compare(inflateSync(idatOf(imageOutput(opts))), Buffer.from(imagePixels(opts))) === 0);
});

test.run();
