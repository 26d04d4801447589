// `{{ item.file }}` sends an upstream result's file only while it holds the bytes its
// record names (sha256): edited or missing, the result's link at the service is sent
// instead (the recorded content, so the same task id), never a task made from what happens
// to be on disk. A copy read before the file was restored is read again.

import { createHash } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { PlannedTask, UpstreamItem } from "../../src/manifest/PlannedTask.js";
import { assetsDir, tempManifest } from "./tempManifest.js";

const yaml = `version: 1
name: ds
jobs:
  stills:
    kind: image
    prompt: a red mug
  clips:
    kind: video
    for_each: stills.outputs
    first_frame: "{{ item.file }}"
    prompt: "the mug turns"
    settings: { duration: 5 }
`;

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const link = "https://cdn.example/stills/image-1.png?sig=1";
const sent = (t: PlannedTask): string => ((t.kind === "video" ? t.request.contents[1] : undefined) as { url: string }).url;

const setUp = () => {
  const original = readFileSync(join(assetsDir, "mug.png"));
  const m = tempManifest(yaml, { "out/stills/a/image-1.png": original });
  const file = join(m.dir, "out", "stills", "a", "image-1.png");
  const item: UpstreamItem = { job: "stills", task: "ds-stills-aaaaaaaaaaaaaaaaaaaa", index: 0, type: "image", url: link, file, sha256: sha(original), vars: {} };
  return { m, file, item, original };
};

test("the file holding the recorded bytes is sent as base64; edited, the link is sent and the id stays", async () => {
  const { m, file, item, original } = setUp();
  try {
    const loaded = await loadManifest(m.file);
    const [intact] = loaded.expandDownstream("clips", [item]);
    assert.is(sent(intact!), original.toString("base64"));
    // Another picture of the same kind at the same place: not the recorded result.
    writeFileSync(file, Buffer.concat([original, Buffer.from("edited")]));
    // The copy read before the edit holds the recorded bytes: still those are sent.
    assert.is(sent(loaded.expandDownstream("clips", [item])[0]!), original.toString("base64"));
    // A new process (a later run, plan) reads the edited file: the link goes instead.
    const [edited] = (await loadManifest(m.file)).expandDownstream("clips", [item]);
    assert.is(edited!.id, intact!.id, "the same task: its input is the recorded result");
    assert.is(sent(edited!), link, "the recorded result's link, not the edited bytes");
    assert.equal(edited!.inputs?.[0]?.sha256, item.sha256);
  } finally {
    m.cleanup();
  }
});

test("read first while edited, then restored: the restored bytes are read again and sent", async () => {
  const { m, file, item, original } = setUp();
  try {
    writeFileSync(file, Buffer.concat([original, Buffer.from("edited")]));
    const loaded = await loadManifest(m.file);
    const [before] = loaded.expandDownstream("clips", [item]);
    assert.is(sent(before!), link);
    writeFileSync(file, original);
    const [after] = loaded.expandDownstream("clips", [item]);
    assert.is(sent(after!), original.toString("base64"));
    assert.is(after!.id, before!.id);
  } finally {
    m.cleanup();
  }
});

test("a missing upstream file is no error: the link is sent", async () => {
  const { m, file, item } = setUp();
  try {
    rmSync(file);
    const loaded = await loadManifest(m.file);
    const [t] = loaded.expandDownstream("clips", [item]);
    assert.is(sent(t!), link);
  } finally {
    m.cleanup();
  }
});

test("for_each tasks: each edited output's link is sent, the intact ones as base64", async () => {
  const { m, file, item, original } = setUp();
  try {
    const other = readFileSync(join(assetsDir, "mug.png"));
    writeFileSync(join(m.dir, "m2.yaml"), yaml.replace("stills.outputs", "stills.tasks").replace("{{ item.file }}", "{{ item.outputs.0.file }}").replace('prompt: "the mug turns"', 'prompt: "the mug turns"\n    images: { second: "{{ item.outputs.1.file }}" }'));
    const two = await loadManifest(join(m.dir, "m2.yaml"));
    const file2 = join(m.dir, "out", "stills", "a", "image-2.png");
    writeFileSync(file2, other);
    const second: UpstreamItem = { ...item, index: 1, url: `${link}&n=2`, file: file2 };
    const [intact] = two.expandDownstream("clips", [item, second]);
    writeFileSync(file, Buffer.concat([original, Buffer.from("edited")]));
    const [edited] = (await loadManifest(join(m.dir, "m2.yaml"))).expandDownstream("clips", [item, second]);
    assert.is(edited!.id, intact!.id);
    const urls = edited!.kind === "video" ? edited!.request.contents.slice(1).map((c) => (c as { url: string }).url) : [];
    assert.ok(urls[0] === link && urls[1] === other.toString("base64"), "the edited output's link, the intact one's bytes");
  } finally {
    m.cleanup();
  }
});

test.run();
