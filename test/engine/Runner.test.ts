// The engine against the real emulator over loopback HTTP: a batch runs to the end,
// files match the lockfile, reruns create and download nothing, a lost lockfile costs
// lookups and not creates.

import { createHash } from "node:crypto";
import { readFileSync, rmSync, existsSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import type { RunEvent } from "../../src/engine/RunEvent.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { tempDir, testManifest } from "./testManifest.js";

const policy = makePolicy(0.01);
let emu: RunningEmulator;
const t = suite("engine");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.1 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const run = (m: ReturnType<typeof testManifest>, extra: Parameters<typeof runLoadedManifest>[1] = {}) =>
  runLoadedManifest(m, { baseUrl: emu.url, env: { OMNIBATCH_API_KEY: emu.apiKey }, policy, ...extra });

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

t("a mixed batch with a downstream job completes: exit 0, each task created once, files match the lockfile", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, {
      tasks: [
        { job: "keys", kind: "image", prompt: "a cat", n: 2 },
        { job: "keys", kind: "image", prompt: "a dog" },
        { job: "clips", kind: "video", prompt: "a boat", watermark: true },
        { job: "clips", kind: "video", prompt: "a tree" },
      ],
      downstreamOf: "keys",
    });
    const events: RunEvent[] = [];
    const s = await run(m, { onEvent: (e) => events.push(e) });
    assert.is(s.exitCode, 0, JSON.stringify(s, null, 1));
    const lock = (await readLockFile(m.lockfilePath))!;
    const ids = Object.keys(lock.tasks).filter((id) => id.startsWith(m.name));
    assert.is(ids.length, 4 + 3, "4 planned + 3 downstream (one per keyframe image)");
    for (const id of ids) {
      const task = lock.tasks[id]!;
      assert.is(task.state, "downloaded", id);
      assert.is(emu.stats().creates[id], 1, `created once: ${id}`);
      for (const o of task.outputs) {
        if (!o.path) continue;
        const file = join(m.outputsDir, o.path);
        assert.ok(existsSync(file), file);
        assert.is(sha256(file), o.sha256);
      }
    }
    const wm = Object.values(lock.tasks).find((x) => x.outputs.some((o) => o.variant === "watermark"));
    assert.ok(wm, "the watermarked copy was downloaded");
    assert.ok(s.reports.length >= 4, "reports written");
    assert.ok(events.some((e) => e.type === "task" && e.state === "downloaded"));
  } finally {
    tmp.remove();
  }
});

t("a second run creates nothing and downloads nothing; a lost lockfile costs lookups, not creates", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, {
      tasks: [
        ...Array.from({ length: 6 }, (_, i) => ({ job: "v", kind: "video" as const, prompt: `video ${i}` })),
        ...Array.from({ length: 7 }, (_, i) => ({ job: "i", kind: "image" as const, prompt: `image ${i}` })),
      ],
      downstreamOf: "i",
    });
    const first = await run(m);
    assert.is(first.exitCode, 0);
    const creates = Object.values(emu.stats().creates).reduce((a, b) => a + b, 0);
    const downloads = emu.stats().downloads;
    const second = await run(m);
    assert.is(second.exitCode, 0);
    assert.is(second.created, 0);
    assert.is(Object.values(emu.stats().creates).reduce((a, b) => a + b, 0), creates, "no create");
    assert.is(emu.stats().downloads, downloads, "no download");
    rmSync(m.lockfilePath);
    rmSync(m.lockfilePath + ".journal", { force: true });
    const third = await run(m);
    assert.is(third.exitCode, 0, JSON.stringify(third));
    assert.is(third.created, 0, "nothing created after the lockfile was lost");
    for (const [id, n] of Object.entries(emu.stats().creates)) if (id.startsWith(m.name)) assert.is(n, 1, id);
  } finally {
    tmp.remove();
  }
});

t("every output item type is handled: video and watermark, audio mp3 and wav downloaded; voice and element kept as metadata", async () => {
  const tmp = tempDir();
  emu.configure({ results: { extraOutputs: true } });
  try {
    const m = testManifest(tmp.dir, { tasks: [{ job: "v", kind: "video", prompt: "with sound", watermark: true }] });
    const s = await run(m);
    assert.is(s.exitCode, 0, JSON.stringify(s));
    const lock = (await readLockFile(m.lockfilePath))!;
    const outputs = Object.values(lock.tasks)[0]!.outputs;
    const kinds = outputs.map((o) => `${o.type}:${o.variant}`).sort();
    for (const k of ["video:main", "video:watermark", "audio:mp3", "audio:wav"]) assert.ok(kinds.includes(k), `${k} in ${kinds}`);
    for (const o of outputs.filter((o) => o.variant !== "meta")) {
      assert.ok(o.path && existsSync(join(m.outputsDir, o.path)), o.path);
      assert.is(sha256(join(m.outputsDir, o.path!)), o.sha256);
    }
    const meta = outputs.filter((o) => o.variant === "meta");
    assert.ok(meta.some((o) => o.type === "voice") && meta.some((o) => o.type === "element"), kinds.join(","));
    assert.ok(meta.every((o) => o.path === undefined && o.meta !== undefined));
  } finally {
    emu.configure({ results: { extraOutputs: false } });
    tmp.remove();
  }
});

t.run();
