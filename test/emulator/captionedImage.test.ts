// Captioned result images are assembled from a caption panel encoded from its layout
// (OutputMedia.captionPanelDeflate, through FixedDeflate) and the cached rows under it:
// the file must decode, checksum included, to exactly the pixels drawn whole, for every
// size, watermark and caption; the deflate writer and the closed-form Adler-32 must agree
// with zlib. Images over a reference picture are assembled from a cached drawing of it
// (OutputMedia.referenceIdat): the same pixels as drawing them whole.

import { deflateSync, inflateRawSync, inflateSync } from "node:zlib";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { adler32, adler32Combine, adlerPixels, adlerStart, adlerValue, FixedDeflateWriter } from "../../src/emulator/FixedDeflate.js";
import { IMAGE_OUTPUT_SIZES, imageCaption, imageOutput, imagePixels } from "../../src/emulator/OutputMedia.js";
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

test("adler32Combine agrees with zlib's checksum, lengths past 65521 and empty parts included", () => {
  const prng = new Prng(7);
  const data = new Uint8Array(200_000).map(() => prng.int(0, 255));
  for (const at of [0, 1, 5552, 65_521, 65_522, 131_042, 199_999, 200_000]) {
    const a = data.subarray(0, at);
    const b = data.subarray(at);
    assert.is(adler32Combine(zlibAdler(a), zlibAdler(b), b.length), zlibAdler(data), `split at ${at}`);
  }
});

test("adlerPixels: the checksum of n pixels of one colour in closed form, as zlib sums the bytes", () => {
  for (const [p0, p1, p2] of [[0, 0, 0], [255, 255, 255], [10, 19, 35], [0, 0, 255], [255, 0, 0]] as const) {
    for (const n of [1, 2, 3, 320, 756, 21_841, 65_535]) {
      const s = adlerStart();
      adlerPixels(s, p0, p1, p2, n);
      const bytes = new Uint8Array(3 * n);
      for (let i = 0; i < bytes.length; i += 3) bytes.set([p0, p1, p2], i);
      assert.is(adlerValue(s), zlibAdler(bytes), `(${p0},${p1},${p2}) x ${n}`);
    }
  }
});

test("FixedDeflateWriter: literals and copies (long, overlapping, at the window's edge) decode to what they say", () => {
  const prng = new Prng(11);
  const w = new FixedDeflateWriter(16);
  const expect: number[] = [];
  for (let step = 0; step < 3000; step++) {
    if (expect.length < 3 || prng.chance(0.4)) {
      const v = prng.int(0, 255);
      w.literal(v);
      expect.push(v);
    } else {
      const distance = prng.chance(0.1) ? Math.min(expect.length, 32_768) : prng.int(1, Math.min(expect.length, 32_768));
      const length = prng.chance(0.2) ? prng.int(259, 1200) : prng.int(3, 258);
      w.copy(length, distance);
      for (let i = 0; i < length; i++) expect.push(expect[expect.length - distance]!);
    }
  }
  assert.is(w.position, expect.length);
  // The data ends in a non-final block; one final empty stored block after it ends the stream.
  const stream = Buffer.concat([w.finish(), Buffer.from([1, 0, 0, 0xff, 0xff])]);
  assert.ok(Buffer.compare(inflateRawSync(stream), Buffer.from(expect)) === 0);
  assert.throws(() => new FixedDeflateWriter().copy(3, 1), /copy of 3 bytes from 1 back at 0/);
});

test("a captioned image decodes (checksum checked by inflate) to the pixels drawn whole: every ratio, watermark, caption", () => {
  const prompts = ["x", "a lighthouse at dusk", "bench still 12-345, a lighthouse at dusk", "word ".repeat(80), "caf\u00e9 ~{|}` ,,,,jjjj gggg yyyy !!!! ####"];
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
          assert.ok(png.length < 12_000, `${ratio}: ${png.length} bytes`);
        }
      }
    }
  }
});

test("a caption longer than fits, and lines wider than the picture: only what fits is drawn, still exact", () => {
  for (const caption of [Array.from({ length: 40 }, (_, i) => `line ${i}`), ["W".repeat(200), "i".repeat(200)], ["@"]]) {
    for (const ratio of ["16:9", "3:4", "1:1", "21:9"]) {
      const opts = { aspectRatio: ratio, watermark: true, seed: 3, caption };
      assert.ok(Buffer.compare(inflateSync(idatOf(imageOutput(opts))), Buffer.from(imagePixels(opts))) === 0, `${ratio} ${caption[0]}`);
    }
  }
});

/** A small reference copy of seeded noise (the worst case for compression), as ReferenceImage.shrink gives. */
const noise = (key: string, width: number, height: number, seed: number) => {
  const r = new Prng(seed);
  return { key, width, height, rgb: Uint8Array.from({ length: width * height * 3 }, () => Math.floor(r.next() * 256)) };
};

test("an image over a reference picture decodes (checksum checked) to the pixels drawn whole: every ratio, watermark, caption, with and without a cache key", () => {
  const refs = [noise("wide", 96, 54, 1), noise("tall", 40, 96, 2), noise("tiny", 1, 1, 3)];
  const prompts = ["", "x", "a product shot on a kitchen table", "word ".repeat(80)];
  for (const ratio of [...Object.keys(IMAGE_OUTPUT_SIZES), "auto"]) {
    for (const watermark of [false, true]) {
      for (const [i, prompt] of prompts.entries()) {
        const background = refs[i % refs.length]!;
        const caption = prompt === "" ? [] : imageCaption(prompt, i, 3, ratio);
        const opts = { aspectRatio: ratio, watermark, seed: i * 7 + (watermark ? 1 : 0), caption, background };
        const expect = Buffer.from(imagePixels(opts));
        const png = imageOutput(opts);
        assert.ok(Buffer.compare(inflateSync(idatOf(png)), expect) === 0, `${ratio} wm=${watermark} ${caption.length} lines`);
        assert.equal(png, imageOutput(opts), "the same bytes a second time (the drawing from the cache)");
        const { key: _key, ...unkeyed } = background;
        assert.ok(Buffer.compare(inflateSync(idatOf(imageOutput({ ...opts, background: unkeyed }))), expect) === 0, `drawn whole: ${ratio}`);
      }
    }
  }
  // The same reference under other captions and colours: each from the one cached drawing, each exact.
  for (let seed = 0; seed < 30; seed++) {
    const opts = { aspectRatio: "16:9", watermark: seed % 3 === 0, seed, caption: imageCaption(`still ${seed} `.repeat(seed % 7), 0, 1, "16:9"), background: refs[0]! };
    assert.ok(Buffer.compare(inflateSync(idatOf(imageOutput(opts))), Buffer.from(imagePixels(opts))) === 0, `seed ${seed}`);
  }
});

test("over a reference, each pixel is the bilinear sample of the copy scaled to cover, tinted a quarter towards the colour (drawn the straightforward way here)", () => {
  const palette = new Map<number, number[]>();
  for (const ratio of ["16:9", "9:16", "1:1", "21:9"]) {
    for (const ref of [noise("a", 96, 54, 5), noise("b", 7, 96, 6), noise("c", 1, 1, 7)]) {
      const [width, height] = IMAGE_OUTPUT_SIZES[ratio]!;
      for (const seed of [0, 1, 7]) {
        const got = imagePixels({ aspectRatio: ratio, watermark: false, seed, background: ref });
        // The colour: the plain picture's first pixel.
        const rgb = palette.get(seed) ?? Array.from(imagePixels({ aspectRatio: "1:1", watermark: false, seed }).subarray(1, 4));
        palette.set(seed, rgb);
        const cover = Math.max(width / ref.width, height / ref.height);
        const offX = (ref.width * cover - width) / 2;
        const offY = (ref.height * cover - height) / 2;
        const at = (x: number, y: number, c: number) => ref.rgb[(y * ref.width + x) * 3 + c]!;
        for (let y = 0; y < height; y += 7) {
          for (let x = 0; x < width; x += 5) {
            const sx = Math.min(ref.width - 1, Math.max(0, (x + offX) / cover - 0.5));
            const sy = Math.min(ref.height - 1, Math.max(0, (y + offY) / cover - 0.5));
            const [x0, y0] = [Math.floor(sx), Math.floor(sy)];
            const [x1, y1] = [Math.min(ref.width - 1, x0 + 1), Math.min(ref.height - 1, y0 + 1)];
            const [fx, fy] = [sx - x0, sy - y0];
            for (let c = 0; c < 3; c++) {
              const top = at(x0, y0, c) * (1 - fx) + at(x1, y0, c) * fx;
              const bottom = at(x0, y1, c) * (1 - fx) + at(x1, y1, c) * fx;
              const want = Math.round((top * (1 - fy) + bottom * fy) * 0.75 + rgb[c]! * 0.25);
              assert.is(got[y * (1 + width * 3) + 1 + x * 3 + c], want, `${ratio} ${ref.key} (${x}, ${y}) channel ${c}`);
            }
          }
        }
      }
    }
  }
});

test("adler32 agrees with zlib's over lengths around its modulo runs", () => {
  const r = new Prng(11);
  for (const length of [0, 1, 5551, 5552, 5553, 11_104, 70_001]) {
    for (const fill of ["random", "ff"] as const) {
      const data = Uint8Array.from({ length }, () => (fill === "ff" ? 255 : Math.floor(r.next() * 256)));
      assert.is(adler32(data), zlibAdler(data), `${length} ${fill}`);
    }
  }
});

test.run();
