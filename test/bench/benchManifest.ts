// YAML manifests for the benchmarks, written into a temp folder: N plain image or video
// tasks from a matrix (two inline axes, so 100,000 tasks stay a short file), or an image
// job feeding a video job (for_each). Going through YAML keeps loading and planning in
// what is measured, as a user's run would.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface BenchManifestOptions {
  readonly dir: string;
  readonly name: string;
  readonly count: number;
  readonly concurrency: number;
}

/** Two axes whose product is exactly `count`: a × b with b = 1000 when it divides. */
const matrix = (count: number): string => {
  const b = count >= 1000 && count % 1000 === 0 ? 1000 : 1;
  const a = count / b;
  const list = (n: number) => `[${Array.from({ length: n }, (_, i) => i).join(", ")}]`;
  return `    matrix:\n      a: ${list(a)}\n      b: ${list(b)}\n`;
};

const header = (o: BenchManifestOptions) =>
  [
    "version: 1",
    `name: ${o.name}`,
    "outputs: out",
    `concurrency: ${o.concurrency}`,
    "defaults:",
    "  image: { resolution: 1k }",
    '  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }',
    "jobs:",
    "",
  ].join("\n");

const write = (o: BenchManifestOptions, body: string): string => {
  mkdirSync(o.dir, { recursive: true });
  const file = join(o.dir, `${o.name}.yaml`);
  writeFileSync(file, header(o) + body);
  return file;
};

export const writeImageManifest = (o: BenchManifestOptions): string =>
  write(o, `  stills:\n    kind: image\n${matrix(o.count)}    prompt: "bench still {{ a }}-{{ b }}, a lighthouse at dusk"\n`);

export const writeVideoManifest = (o: BenchManifestOptions): string =>
  write(o, `  clips:\n    kind: video\n${matrix(o.count)}    prompt: "bench clip {{ a }}-{{ b }}, a slow pan over a harbour"\n`);

/** `count` images, each feeding one video (first frame = the image). */
export const writePipelineManifest = (o: BenchManifestOptions): string =>
  write(
    o,
    `  stills:\n    kind: image\n${matrix(o.count)}    prompt: "bench still {{ a }}-{{ b }}, a lighthouse at dusk"\n` +
      "  clips:\n" +
      "    kind: video\n" +
      "    for_each: stills.outputs\n" +
      "    contents:\n" +
      '      - first_frame: "{{ item.url }}"\n' +
      "        id: start\n" +
      '    prompt: "@start turns slowly"\n' +
      "    settings: { duration: 5 }\n",
  );
