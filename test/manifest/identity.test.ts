// Task identity: the same intent gives the same id on any machine, checkout path and
// key order; any change of the request gives a new one; files count by content.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { canonicalJson, shortHash } from "../../src/manifest/TaskIdentity.js";
import { itemFile } from "../../src/manifest/itemFile.js";
import type { UpstreamItem } from "../../src/manifest/PlannedTask.js";
import { assetsDir, tempManifest } from "./tempManifest.js";

const base = `version: 1
name: idt
jobs:
  pics:
    kind: image
    matrix: { color: [red, blue] }
    images: { ref: assets/mug.png }
    prompt: "a {{ color }} mug like <<<ref>>>"
    resolution: 2k
  clip:
    kind: video
    prompt: a calm sea
    settings: { duration: 5, resolution: 1080p }
`;

const idsOf = async (yaml: string, files: Record<string, string | Uint8Array> = {}) => {
  const m = tempManifest(yaml, files);
  try {
    const loaded = await loadManifest(m.file);
    return loaded.tasks.map((t) => t.id);
  } finally {
    m.cleanup();
  }
};

test("ids have the form <name>-<job>-<20 base32 chars> and only [a-z0-9_-]", async () => {
  for (const id of await idsOf(base)) assert.match(id, /^idt-(pics|clip)-[a-z2-7]{20}$/);
});

test("the same manifest in two different folders gives the same ids", async () => {
  assert.equal(await idsOf(base), await idsOf(base));
});

test("reordering keys (job fields, settings, jobs) does not change any id", async () => {
  const reordered = `name: idt
version: 1
jobs:
  clip:
    settings: { resolution: 1080p, duration: 5 }
    prompt: a calm sea
    kind: video
  pics:
    resolution: 2k
    prompt: "a {{ color }} mug like <<<ref>>>"
    images: { ref: assets/mug.png }
    matrix: { color: [red, blue] }
    kind: image
`;
  assert.equal(new Set(await idsOf(reordered)), new Set(await idsOf(base)));
});

test("writing a spec default explicitly does not change the id", async () => {
  const explicit = base.replace("settings: { duration: 5, resolution: 1080p }", "settings: { duration: 5, resolution: 1080p, audio: \"off\" }");
  assert.equal(await idsOf(explicit), await idsOf(base));
});

test("the same image content under another path gives the same id", async () => {
  const moved = base.replace("assets/mug.png", "elsewhere/copy.png");
  assert.equal(await idsOf(moved, { "elsewhere/copy.png": readFileSync(join(assetsDir, "mug.png")) }), await idsOf(base));
});

test("other image content under the same path gives a new id", async () => {
  const a = await idsOf(base);
  const b = await idsOf(base, { "assets/mug.png": readFileSync(join(assetsDir, "lamp.png")) });
  assert.is.not(a[0], b[0]);
  assert.is(a[2], b[2], "the video task does not use the image");
});

for (const [what, from, to] of [
  ["the prompt", "a calm sea", "a calm lake"],
  ["a setting", "duration: 5,", "duration: 10,"],
  ["the resolution", "resolution: 2k", "resolution: 1k"],
  ["the manifest name", "name: idt", "name: idt2"],
] as const) {
  test(`changing ${what} changes the id of the tasks it touches`, async () => {
    const a = await idsOf(base);
    const b = await idsOf(base.replace(from, to));
    assert.ok(a.some((id, i) => id !== b[i]));
  });
}

test("take makes distinct ids and keeps take 1's id when raised", async () => {
  const one = await idsOf(base);
  const three = await idsOf(base.replace("    kind: video\n", "    kind: video\n    take: 3\n"));
  assert.is(three.length, one.length + 2);
  assert.ok(three.includes(one[2]!), "take 1 of clip keeps its id");
});

test("withAttempt gives a new id and hash and keeps the request otherwise", async () => {
  const m = tempManifest(base);
  try {
    const loaded = await loadManifest(m.file);
    const t = loaded.tasks[2]!;
    const second = loaded.withAttempt(t, 2);
    assert.is.not(second.id, t.id);
    assert.is.not(second.requestHash, t.requestHash);
    assert.is(second.attempt, 2);
    assert.is(second.kind === "video" && second.request.options?.external_task_id, second.id);
    assert.is(loaded.withAttempt(second, 1).id, t.id, "attempt 1 again is the original");
  } finally {
    m.cleanup();
  }
});

const downstream = `version: 1
name: ds
jobs:
  stills:
    kind: image
    prompt: a red mug
  clips:
    kind: video
    for_each: stills.outputs
    first_frame: "{{ item.url }}"
    prompt: "the mug turns, {{ item.index }}"
    settings: { duration: 5 }
`;

const item = (url: string, sha: string, index = 0): UpstreamItem => ({
  job: "stills",
  task: "ds-stills-aaaaaaaaaaaaaaaaaaaa",
  index,
  type: "image",
  url,
  file: `/somewhere/${sha}.png`,
  sha256: sha,
  vars: {},
});

test("downstream ids use the upstream content hash: a fresh URL for the same content keeps the id", async () => {
  const m = tempManifest(downstream);
  try {
    const loaded = await loadManifest(m.file);
    const a = loaded.expandDownstream("clips", [item("https://cdn.example/x.png?sig=1&exp=100", "ab".repeat(32))]);
    const b = loaded.expandDownstream("clips", [item("https://cdn.example/x.png?sig=2&exp=200", "ab".repeat(32))]);
    const c = loaded.expandDownstream("clips", [item("https://cdn.example/x.png?sig=1&exp=100", "cd".repeat(32))]);
    assert.is(a[0]!.id, b[0]!.id);
    assert.is.not(a[0]!.id, c[0]!.id);
    const content = a[0]!.kind === "video" ? a[0]!.request.contents[1] : undefined;
    assert.equal(content, { type: "first_frame", url: "https://cdn.example/x.png?sig=1&exp=100", id: "first_frame" }, "the request carries the URL");
    assert.equal(a[0]!.upstream, { job: "stills", task: "ds-stills-aaaaaaaaaaaaaaaaaaaa", output: 0 });
  } finally {
    m.cleanup();
  }
});

test("{{ item.file }} with the outputs in a store is the result's link: the same task id as the local file of the same content, and the request carries the link", async () => {
  const m = tempManifest(downstream.replace('first_frame: "{{ item.url }}"', 'first_frame: "{{ item.file }}"'));
  try {
    const loaded = await loadManifest(m.file);
    const file = join(assetsDir, "mug.png");
    const sha = createHash("sha256").update(readFileSync(file)).digest("hex");
    const link = "https://cdn.example/stills/image-1.png?sig=1";
    const fromFolder = loaded.expandDownstream("clips", [{ ...item(link, sha), file: itemFile(join(assetsDir), "mug.png", link) }]);
    const fromStore = loaded.expandDownstream("clips", [{ ...item(link, sha), file: itemFile("s3://results/ci", "mug.png", link) }]);
    assert.is(fromStore[0]!.id, fromFolder[0]!.id, "one manifest, a folder on a laptop and a store in CI: the same tasks");
    const sent = (t: (typeof fromStore)[number]) => (t.kind === "video" ? t.request.contents[1] : undefined) as { url?: string } | undefined;
    assert.is(sent(fromStore[0]!)?.url, link);
    assert.ok(sent(fromFolder[0]!)?.url?.length! > 1000 && !sent(fromFolder[0]!)!.url!.startsWith("http"), "the folder's file is sent as base64");
    assert.is(itemFile("/out", "stills/a/image-1.png", link), join("/out", "stills", "a", "image-1.png"));
  } finally {
    m.cleanup();
  }
});

// Ids a run made before the service's name and the video model were settings (the spec's
// `svc` era): a lockfile of that time names its tasks by these, so they must not change,
// or every task would look new and be paid for again.
const IDS_BEFORE_SERVICE_NAMES = ["idt-pics-47ablvfeyhhwhc7ygvvh", "idt-pics-i77ivupt5ocg35wq7u3z", "idt-clip-db2v3grwlpwnb25rtsxe"];

test("ids of a manifest naming no model are those runs made before the service's name was a setting", async () => {
  assert.equal(await idsOf(base), IDS_BEFORE_SERVICE_NAMES);
});

const loadedWith = async (yaml: string, service?: string) => {
  const m = tempManifest(yaml);
  try {
    return await loadManifest(m.file, service === undefined ? {} : { service });
  } finally {
    m.cleanup();
  }
};

test("a video job naming the service's default model is the same task; another model is another task sent to its path", async () => {
  const named = await loadedWith(base.replace("    prompt: a calm sea\n", "    prompt: a calm sea\n    model: kling-o1\n"));
  assert.equal(named.tasks.map((t) => t.id), IDS_BEFORE_SERVICE_NAMES);
  assert.is((named.tasks[2] as { model?: string }).model, undefined, "the default: the client's <service>-o1");
  const other = await loadedWith(base.replace("    prompt: a calm sea\n", "    prompt: a calm sea\n    model: kling-o2-preview\n"));
  assert.is(other.tasks[0]!.id, IDS_BEFORE_SERVICE_NAMES[0], "the image tasks are untouched");
  assert.is.not(other.tasks[2]!.id, IDS_BEFORE_SERVICE_NAMES[2]);
  assert.is((other.tasks[2] as { model?: string }).model, "kling-o2-preview");
  const viaDefaults = await loadedWith(base.replace("jobs:\n", "defaults:\n  video: { model: kling-o2-preview }\njobs:\n"));
  assert.is(viaDefaults.tasks[2]!.id, other.tasks[2]!.id, "defaults.video.model is the same choice");
});

test("under another service name (a gateway) the default model is that name's, and the ids stay the same", async () => {
  const svc = await loadedWith(base.replace("    prompt: a calm sea\n", "    prompt: a calm sea\n    model: svc-o1\n"), "svc");
  assert.equal(svc.tasks.map((t) => t.id), IDS_BEFORE_SERVICE_NAMES);
});

test("canonical JSON sorts keys at every level and leaves undefined out", () => {
  assert.is(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } }), '{"a":{"d":[1,{"y":2,"z":1}]},"b":1}');
});

test("shortHash gives 20 base32 characters", () => {
  assert.is(shortHash("00".repeat(32)), "aaaaaaaaaaaaaaaaaaaa");
  assert.is(shortHash("ff".repeat(32)), "77777777777777777777");
});

test.run();
