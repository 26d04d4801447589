// Every manifest the repository holds in manifests/ validates, carries its header and schema line, and the
// demo has the promised shape; a manifest in the shape of the product contract's
// example validates too; the schema describes every property.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { tempManifest } from "./tempManifest.js";
import { committedFiles } from "../checkoutFiles.js";

const dir = fileURLToPath(new URL("../../manifests", import.meta.url));
// The manifests git holds, not what a user's commands left beside them (review files are YAML too).
const examples = committedFiles("manifests").filter((f) => /^[^/]+\.ya?ml$/.test(f));

test("there are examples, demo.yaml among them", () => {
  assert.ok(examples.includes("demo.yaml"));
  assert.ok(examples.length >= 5);
});

for (const name of examples) {
  test(`manifests/${name} validates without errors and starts with the schema line and a header`, async () => {
    const text = readFileSync(join(dir, name), "utf8");
    assert.ok(text.startsWith("# yaml-language-server: $schema=../schemas/manifest.schema.json\n"));
    assert.ok(text.split("\n").filter((l) => l.startsWith("#")).length >= 3, "a comment header saying what it shows");
    const m = await loadManifest(join(dir, name));
    assert.ok(m.tasks.length > 0);
    assert.equal(m.warnings, [], "no warnings in an example");
  });
}

test("the demo has about ten tasks of both kinds, a CSV axis and a downstream job", async () => {
  const m = await loadManifest(join(dir, "demo.yaml"));
  const kinds = new Set(m.jobs.map((j) => j.kind));
  assert.equal(kinds, new Set(["image", "video"]));
  const down = m.jobs.find((j) => j.upstream);
  assert.ok(down);
  const total = m.tasks.length + m.expectedDownstreamCount(down!.id);
  assert.ok(total >= 8 && total <= 12, `${total}`);
  assert.match(readFileSync(join(dir, "demo.yaml"), "utf8"), /rows: data\/\w+\.csv/);
});

test("a manifest in the shape of the product contract's example validates", async () => {
  const m = tempManifest(
    `version: 1
name: autumn-launch
outputs: ../outputs/autumn
concurrency: 4
budget: { max: 30, currency: USD }
prices: { video: { "720p": 0.3, "1080p": 0.45 }, image: { "1k": 0.02 } }
vars: { brand: Lumen }
defaults:
  video: { resolution: 1080p, aspect_ratio: "9:16", duration: 5 }
  image: { resolution: 2k }
jobs:
  stills:
    kind: image
    matrix:
      item_row: { rows: data/items.csv }
      light: [soft, hard]
      exclude: [{ light: hard, item_row: { sku: K-2 } }]
    images: { look: "{{ item_row.photo }}" }
    prompt: "{{ brand }} {{ item_row.name }}, {{ light }} light, styled like <<<look>>>"
    n: 2
  motion:
    kind: video
    for_each: stills.outputs
    contents:
      - first_frame: "{{ item.url }}"
        id: opening
    prompt: "@opening drifts sideways, {{ item.vars.light }} feel"
    settings: { duration: 5 }
`,
    { "data/items.csv": "sku,name,photo\nK-1,kettle,assets/mug.png\nK-2,toaster,assets/lamp.png\n" },
  );
  try {
    const loaded = await loadManifest(m.file);
    assert.is(loaded.tasks.length, 3);
    assert.is(loaded.expectedDownstreamCount("motion"), 6);
  } finally {
    m.cleanup();
  }
});

test("every property in the manifest schema has a description", () => {
  const schema = JSON.parse(readFileSync(new URL("../../schemas/manifest.schema.json", import.meta.url), "utf8")) as Record<string, unknown>;
  const defs = schema.$defs as Record<string, Record<string, unknown>>;
  const missing: string[] = [];
  const described = (s: Record<string, unknown>): boolean =>
    typeof s.description === "string" ||
    (typeof s.$ref === "string" && typeof defs[s.$ref.replace("#/$defs/", "")]?.description === "string");
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}[${i}]`));
    if (!node || typeof node !== "object") return;
    const o = node as Record<string, unknown>;
    if (o.properties && typeof o.properties === "object") {
      for (const [k, v] of Object.entries(o.properties as Record<string, Record<string, unknown>>)) {
        if (!described(v)) missing.push(`${at}.${k}`);
      }
    }
    for (const [k, v] of Object.entries(o)) walk(v, `${at}.${k}`);
  };
  walk(schema, "#");
  assert.equal(missing, []);
});


test("the manifest example in docs/manifests.md validates", async () => {
  const page = readFileSync(new URL("../../docs/manifests.md", import.meta.url), "utf8");
  const section = page.slice(page.indexOf("# Manifests"));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
  const m = tempManifest(yaml, { "data/products.csv": "sku,name,photo\nA-1,mug,assets/mug.png\nB-2,lamp,assets/lamp.png\n" });
  try {
    const loaded = await loadManifest(m.file);
    assert.is(loaded.tasks.length, 3);
    assert.equal(loaded.jobs.map((j) => j.id), ["stills", "clips"]);
  } finally {
    m.cleanup();
  }
});

test.run();
