// The emulator's cost of one result image drawn over a task's reference picture (what a
// download of such a task's image costs past the result-file cache): `imageOutput` with a
// background and a caption, as ResultFiles calls it, for tasks sharing one reference (a
// batch of stills made from one product shot), in this process. Prints one JSON object:
// CPU ms per image and per ratio, and the process's peak RSS.
// `node --import tsx test/bench/emulatorReferenceImage.ts [images per ratio] [references]`

import { readFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { imageCaption, imageOutput } from "../../src/emulator/OutputMedia.js";
import { referenceThumbnail } from "../../src/emulator/ReferenceImage.js";

/** A PNG of a diagonal gradient (different per `n`): a reference picture as a user sends it. */
const referencePng = (width: number, height: number, n: number): Buffer => {
  const stride = width * 3 + 1;
  const raw = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = y * stride + 1 + x * 3;
      raw[p] = (x * 255) / width;
      raw[p + 1] = (y * 255) / height;
      raw[p + 2] = (n * 40 + x + y) & 255;
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    return Buffer.concat([len, Buffer.from(type, "latin1"), data, Buffer.alloc(4)]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
};

const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

export const measureReferenceImages = (perRatio: number, references: number) => {
  const thumbs = Array.from({ length: references }, (_, n) => referenceThumbnail(referencePng(640, 480, n).toString("base64"))!);
  const ratios = ["1:1", "16:9", "9:16", "4:3", "21:9"];
  const byRatio: Record<string, number> = {};
  let total = 0;
  let bytes = 0;
  for (const ratio of ratios) {
    const t0 = cpuMs();
    for (let i = 0; i < perRatio; i++) {
      const seed = (i * 16) % 4096;
      const caption = imageCaption(`a product shot number ${i} on a kitchen table, soft light`, 0, 1, ratio);
      bytes += imageOutput({ aspectRatio: ratio, watermark: i % 2 === 1, seed, caption, background: thumbs[i % references]! }).length;
    }
    const spent = cpuMs() - t0;
    byRatio[ratio] = Math.round((spent / perRatio) * 1000) / 1000;
    total += spent;
  }
  const hwm = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"));
  return {
    images: perRatio * ratios.length,
    references,
    cpuMsPerImage: Math.round((total / (perRatio * ratios.length)) * 1000) / 1000,
    byRatio,
    meanBytes: Math.round(bytes / (perRatio * ratios.length)),
    peakRssMb: hwm ? Math.round(Number(hwm[1]) / 1024) : null,
  };
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const [perRatio = 400, references = 4] = process.argv.slice(2).map(Number);
  process.stdout.write(`${JSON.stringify(measureReferenceImages(perRatio, references))}\n`);
}
