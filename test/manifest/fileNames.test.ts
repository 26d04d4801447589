// The `name` template of a job: what files are called (sanitised, numbered 1-based like
// `item.index`, distinct per task), the default names unchanged, and template mistakes
// reported at their file:line:col like every other template.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ManifestInvalid, type Diagnostic } from "../../src/manifest/Diagnostic.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { LoadedManifest } from "../../src/manifest/LoadedManifest.js";
import type { UpstreamItem } from "../../src/manifest/PlannedTask.js";
import { fileNameFor, type OutputRef } from "../../src/manifest/fileNames.js";
import { tempManifest } from "./tempManifest.js";

const load = async (yaml: string): Promise<LoadedManifest> => {
  const m = tempManifest(yaml, {});
  try {
    return await loadManifest(m.file);
  } finally {
    m.cleanup();
  }
};

const problems = async (yaml: string): Promise<Diagnostic[]> => {
  try {
    await load(yaml);
  } catch (error) {
    if (error instanceof ManifestInvalid) return [...error.diagnostics];
    throw error;
  }
  throw new Error("expected the manifest to be invalid");
};

const products = `version: 1
name: t
jobs:
  stills:
    kind: image
    matrix:
      product: [{ sku: A-1, title: Mug }, { sku: "B/2", title: Cup }]
      style: [studio, street]
    name: "{{ product.sku }}-{{ style }}"
    prompt: "{{ product.title }} in a {{ style }} setting"
  clips:
    kind: video
    for_each: stills.outputs
    first_frame: "{{ item.url }}"
    name: "{{ item.vars.product.sku }}-{{ item.vars.style }}-{{ item.index }}"
    prompt: the mug turns
`;

test("a job's name template names each task's files: images numbered from 1, a video not", async () => {
  const m = await load(products);
  const names = m.tasks.map((t) => t.name);
  assert.equal(names, ["A-1-studio", "A-1-street", "B_2-studio", "B_2-street"], "a / in a value is sanitised as in folders");
  const image: OutputRef = { type: "image", index: 0, variant: "main" };
  assert.is(fileNameFor(image, "png", m.tasks[0]!.name), "A-1-studio-1.png");
  assert.is(fileNameFor({ ...image, index: 2 }, "png", m.tasks[0]!.name), "A-1-studio-3.png");
  assert.is(fileNameFor({ type: "video", index: 0, variant: "main" }, "mp4", "A-1-studio"), "A-1-studio.mp4");
  assert.is(fileNameFor({ type: "video", index: 0, variant: "watermark" }, "mp4", "A-1-studio"), "A-1-studio.watermark.mp4");
  assert.is(fileNameFor({ type: "audio", index: 0, variant: "mp3" }, "mp3", "A-1-studio"), "A-1-studio-audio-1.mp3");
});

test("without a name template the files keep their default names", async () => {
  const m = await load(products.replace('    name: "{{ product.sku }}-{{ style }}"\n', ""));
  assert.is(m.tasks[0]!.name, undefined);
  assert.is(fileNameFor({ type: "image", index: 0, variant: "main" }, "png", undefined), "image-1.png");
  assert.is(fileNameFor({ type: "video", index: 1, variant: "watermark" }, "mp4", undefined), "video-2.watermark.mp4");
});

test("item.index is 1-based, like the numbers in file names: the second image's clip is named -2", async () => {
  const m = await load(products);
  const up = m.tasks[0]!;
  const item = (index: number): UpstreamItem => ({
    job: "stills",
    task: up.id,
    index,
    type: "image",
    url: `https://x.test/${index}.png`,
    file: `/x/${index}.png`,
    sha256: String(index).repeat(64),
    vars: up.vars,
  });
  const clips = m.expandDownstream("clips", [item(0), item(1)]);
  assert.equal(clips.map((c) => c.name), ["A-1-studio-1", "A-1-studio-2"]);
  // The folder numbers the same output the same way.
  assert.ok(clips[1]!.dir.endsWith("-2"), clips[1]!.dir);
});

test("names that sanitise to something unsafe stay one plain segment", async () => {
  const m = await load(`version: 1
name: t
jobs:
  a:
    kind: image
    matrix: { v: ["../../etc/passwd", "CON", " .hidden", "x:y*z"] }
    name: "{{ v }}"
    prompt: "p {{ v }}"
`);
  for (const t of m.tasks) {
    assert.not.match(t.name!, /[/\\:*?"<>|]/, t.name);
    assert.not.ok(t.name!.startsWith("."), t.name);
    assert.not.ok(/^(con|prn|aux|nul)$/i.test(t.name!), t.name);
  }
  assert.is(m.tasks.find((t) => t.vars.v === "CON")!.name, "_CON");
});

test("distinct outputs of one task always get distinct names, letter case ignored", () => {
  // What a task of each kind can hold: an image task its images (and watermarked copies),
  // a video task its videos (and copies) and its sound as mp3 and wav.
  const kinds: Record<string, [OutputRef["type"], OutputRef["variant"], string][]> = {
    image: [["image", "main", "png"], ["image", "watermark", "png"]],
    video: [["video", "main", "mp4"], ["video", "watermark", "mp4"], ["audio", "mp3", "mp3"], ["audio", "wav", "wav"]],
  };
  for (const name of [undefined, "A-1", "x"]) {
    for (const [kind, refs] of Object.entries(kinds)) {
      const seen = new Map<string, string>();
      for (const [type, variant, ext] of refs)
        for (let index = 0; index < 9; index++) {
          const file = fileNameFor({ type, index, variant }, ext, name).toLowerCase();
          const key = `${kind}: ${type}/${index}/${variant}`;
          assert.is(seen.get(file), undefined, `${key} and ${seen.get(file)} share ${file}`);
          seen.set(file, key);
        }
    }
  }
});

test("a mistake in a name template is reported at its file:line:col", async () => {
  const found = await problems(`version: 1
name: t
jobs:
  a:
    kind: image
    matrix: { style: [studio] }
    name: "{{ style }}-{{ stlye }}"
    prompt: "p {{ style }}"
`);
  assert.is(found.length, 1, JSON.stringify(found));
  const d = found[0]!;
  assert.is(d.line, 7);
  assert.is(d.col, 24, JSON.stringify(d)); // the `{{` of the unknown name
  assert.match(d.message, /stlye/);
});

test.run();
