// The emulator's result pictures show their task: drawn over a scaled copy of the first
// reference image when it is a PNG (left red, right blue stays left red, right blue),
// a plain colour without one; the caption (first words of the prompt) on top. Real
// emulator over loopback HTTP; the PNG decoder also checked on its own.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { deflateSync } from "node:zlib";
import { decodePng, referenceThumbnail, shrink } from "../../src/emulator/ReferenceImage.js";
import { imageOutput } from "../../src/emulator/OutputMedia.js";
import { Client, start } from "./harness.js";

const emu = await start({ slots: { video: 100, image: 100 } });
const c = new Client(emu);

/** A PNG, left half red, right half blue, with each filter type used on some row. */
const halves = (width: number, height: number): Buffer => {
  const stride = width * 3 + 1;
  const raw = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    raw[y * stride] = 0;
    for (let x = 0; x < width; x++) {
      const p = y * stride + 1 + x * 3;
      raw[p] = x < width / 2 ? 255 : 0;
      raw[p + 2] = x < width / 2 ? 0 : 255;
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    // CRC is not checked by the reader; the emulator's probe checks only the header.
    let crc = 0xffffffff;
    for (const b of body) {
      crc ^= b;
      for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
    }
    const tail = Buffer.alloc(4);
    tail.writeUInt32BE((crc ^ 0xffffffff) >>> 0);
    return Buffer.concat([len, body, tail]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
};

const finished = async (body: unknown): Promise<{ url: string }> => {
  const created = await c.createImage(body);
  assert.is(created.status, 200, JSON.stringify(created.body));
  // The emulator's own clock: the task is done once it has moved on.
  emu.advanceClock(25_000);
  const r = await c.get(`/v1/images/omni-image/${created.body.data.task_id}`);
  assert.is(r.body.data.task_status, "succeed", JSON.stringify(r.body.data)); // the image API says "succeed"
  return r.body.data.task_result.images[0];
};

const pixel = (img: { width: number; rgb: Uint8Array }, x: number, y: number) => Array.from(img.rgb.subarray((y * img.width + x) * 3, (y * img.width + x) * 3 + 3));

test("the PNG reader reads what the emulator writes, and a copy keeps the halves", () => {
  const own = decodePng(imageOutput({ aspectRatio: "1:1", watermark: false, seed: 2 }))!;
  assert.equal([own.width, own.height], [320, 320]);
  const ref = decodePng(halves(400, 300))!;
  assert.equal(pixel(ref, 10, 10), [255, 0, 0]);
  assert.equal(pixel(ref, 390, 290), [0, 0, 255]);
  const small = shrink(ref);
  assert.equal([small.width, small.height], [96, 72]);
  assert.equal(pixel(small, 2, 2), [255, 0, 0]);
  assert.is(decodePng(new Uint8Array([1, 2, 3])), undefined);
  assert.is(referenceThumbnail("https://example.test/a.png"), undefined, "URLs are not fetched");
});

test("an image task with a PNG reference makes pictures drawn over it; without one, a plain colour", async () => {
  const withRef = await finished({ prompt: "a mug like <<<image_1>>>", aspect_ratio: "1:1", image_list: [{ image: halves(400, 400).toString("base64") }] });
  const img = decodePng(new Uint8Array(await (await fetch(withRef.url)).arrayBuffer()))!;
  assert.equal([img.width, img.height], [320, 320]);
  // Below the caption panel: the left is the reference's red, the right its blue (tinted a quarter).
  const [lr, , lb] = pixel(img, 20, 300);
  const [rr, , rb] = pixel(img, 300, 300);
  assert.ok(lr! > 150 && lb! < 110, `left ${pixel(img, 20, 300)}`);
  assert.ok(rb! > 150 && rr! < 110, `right ${pixel(img, 300, 300)}`);
  const plain = await finished({ prompt: "a mug", aspect_ratio: "1:1" });
  const p = decodePng(new Uint8Array(await (await fetch(plain.url)).arrayBuffer()))!;
  assert.equal(pixel(p, 20, 300), pixel(p, 300, 300), "one colour without a reference");
  // The caption: the top panel holds white text.
  assert.ok(Array.from({ length: 200 }, (_, x) => pixel(img, x + 5, 12)).some(([r, g, b]) => r === 255 && g === 255 && b === 255));
});

test.after(async () => {
  await emu.close();
});

test.run();
