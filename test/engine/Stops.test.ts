// How a run ends: content-risk failures (exit 1, with the service's reason, retried only
// when asked), a refused account (1102, exit 5), the budget (exit 4), the time limit and
// an interrupt (exit 3, then a resumed run finishes), and billing totals that match the
// service's charges exactly.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BigDecimal } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import type { VideoTask } from "../../src/protocol/wire.js";
import { tempDir, testManifest } from "./testManifest.js";

const policy = makePolicy(0.01);
let emu: RunningEmulator;
const t = suite("how a run ends");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.1 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const run = (m: ReturnType<typeof testManifest>, extra: Parameters<typeof runLoadedManifest>[1] = {}) =>
  runLoadedManifest(m, { baseUrl: emu.url, env: { OMNIBATCH_API_KEY: emu.apiKey }, policy, ...extra });

const createsOf = (prefix: string) =>
  Object.entries(emu.stats().creates).filter(([id]) => id.startsWith(prefix));

t("a content-risk failure ends the run with exit 1 and the service's reason; it is not retried by default", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, {
      tasks: [
        { job: "v", kind: "video", prompt: "fine" },
        { job: "v", kind: "video", prompt: "bad [fail]" },
      ],
      retryFailed: 2,
    });
    const s = await run(m);
    assert.is(s.exitCode, 1);
    assert.is(s.failures.length, 1);
    assert.match(s.failures[0]!.message, "content-risk");
    assert.is(createsOf(m.name).length, 2, "no second attempt for a content-risk failure");
    const lock = (await readLockFile(m.lockfilePath))!;
    assert.is(lock.tasks[`${m.name}-v-1`]!.state, "failed");
    assert.match(lock.tasks[`${m.name}-v-1`]!.error!.message, "content-risk");
    const again = await run(m);
    assert.is(again.exitCode, 1);
    assert.is(createsOf(m.name).length, 2, "a rerun does not retry it either");
  } finally {
    tmp.remove();
  }
});

t("retry_failed with retry_content_risk creates new attempts (new ids) up to N times", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, {
      tasks: [{ job: "i", kind: "image", prompt: "bad [fail]" }],
      retryFailed: 2,
      retryContentRisk: true,
    });
    const s = await run(m);
    assert.is(s.exitCode, 1);
    const ids = createsOf(m.name).map(([id]) => id).sort();
    assert.equal(ids, [`${m.name}-i-0`, `${m.name}-i-0-a1`, `${m.name}-i-0-a2`]);
    for (const [, n] of createsOf(m.name)) assert.is(n, 1);
    const again = await run(m);
    assert.is(again.exitCode, 1);
    assert.is(createsOf(m.name).length, 3, "attempts are not repeated by a rerun");
  } finally {
    tmp.remove();
  }
});

t("1102 (balance used up) stops all submission: exit 5, nothing more is sent", async () => {
  const tmp = tempDir();
  emu.reset();
  emu.configure({ billing: { balance: "0.7" } }); // 720p 5 s video lists 0.35, charged 0.28
  try {
    const m = testManifest(tmp.dir, {
      tasks: Array.from({ length: 8 }, (_, i) => ({ job: "v", kind: "video" as const, prompt: `clip ${i}` })),
      concurrency: 1,
    });
    const s = await run(m);
    assert.is(s.exitCode, 5, JSON.stringify(s));
    assert.match(s.reason ?? "", "refused");
    const sent = emu.stats().requests["video.create"] ?? 0;
    assert.ok(createsOf(m.name).length < 8);
    assert.is(emu.stats().rejections["1102"], 1, "the first 1102 stopped submission");
    assert.ok(sent <= createsOf(m.name).length + 1);
  } finally {
    emu.configure({ billing: { balance: "1000000" } });
    emu.reset();
    tmp.remove();
  }
});

t("the budget stops submission before it would be passed: exit 4, in-flight tasks are still followed", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, {
      tasks: Array.from({ length: 10 }, (_, i) => ({ job: "v", kind: "video" as const, prompt: `clip ${i}`, estimate: "0.35" })),
      budget: { max: "1.00", currency: "USD" },
      concurrency: 2,
    });
    const s = await run(m);
    assert.is(s.exitCode, 4, JSON.stringify(s));
    const made = createsOf(m.name).length;
    assert.ok(made >= 2 && made <= 4, `created ${made}`);
    const lock = (await readLockFile(m.lockfilePath))!;
    const states = Object.values(lock.tasks).map((x) => x.state);
    assert.is(states.filter((x) => x === "downloaded").length, made, "every created task was followed to the end");
    assert.ok(BigDecimal.lessThanOrEqualTo(BigDecimal.unsafeFromString(s.spend["USD"]!), BigDecimal.unsafeFromString("1.00")));
  } finally {
    tmp.remove();
  }
});

t("--max-wait stops with exit 3 and work pending; the next run finishes without creating anything twice", async () => {
  const tmp = tempDir();
  emu.configure({ timing: { scale: 1 } });
  try {
    const m = testManifest(tmp.dir, {
      tasks: Array.from({ length: 6 }, (_, i) => ({ job: "v", kind: "video" as const, prompt: `slow ${i}` })),
      concurrency: 3,
    });
    const s = await run(m, { maxWaitMs: 400 });
    assert.is(s.exitCode, 3, JSON.stringify(s));
    assert.is(s.outcome, "pending");
    emu.configure({ timing: { scale: 0.1 } });
    const again = await run(m);
    assert.is(again.exitCode, 0, JSON.stringify(again));
    for (const [id, n] of createsOf(m.name)) assert.is(n, 1, id);
    assert.is(createsOf(m.name).length, 6);
  } finally {
    emu.configure({ timing: { scale: 0.1 } });
    tmp.remove();
  }
});

t("an interrupt (abort signal) stops at once with exit 3; the next run finishes", async () => {
  const tmp = tempDir();
  emu.configure({ timing: { scale: 1 } });
  try {
    const m = testManifest(tmp.dir, {
      tasks: Array.from({ length: 4 }, (_, i) => ({ job: "i", kind: "image" as const, prompt: `wait ${i}` })),
    });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 300);
    const started = Date.now();
    const s = await run(m, { signal: abort.signal });
    assert.is(s.exitCode, 3);
    assert.ok(Date.now() - started < 2000, "stopped at once");
    emu.configure({ timing: { scale: 0.1 } });
    const again = await run(m);
    assert.is(again.exitCode, 0);
    for (const [id, n] of createsOf(m.name)) assert.is(n, 1, id);
  } finally {
    emu.configure({ timing: { scale: 0.1 } });
    tmp.remove();
  }
});

t("billing.json totals equal the emulator's charges summed independently", async () => {
  const tmp = tempDir();
  try {
    const m = testManifest(tmp.dir, {
      tasks: [
        ...Array.from({ length: 5 }, (_, i) => ({ job: "v", kind: "video" as const, prompt: `bill ${i}` })),
      ],
    });
    const s = await run(m);
    assert.is(s.exitCode, 0);
    const lock = (await readLockFile(m.lockfilePath))!;
    const ids = Object.values(lock.tasks).map((x) => x.task_id!);
    const res = await fetch(`${emu.url}/tasks?task_ids=${ids.join(",")}`, { headers: { Authorization: `Bearer ${emu.apiKey}` } });
    const body = (await res.json()) as { data: VideoTask[] };
    let total = BigDecimal.fromBigInt(0n);
    for (const task of body.data) for (const b of task.billing ?? []) if (b.charge_type === "cash") total = BigDecimal.sum(total, BigDecimal.unsafeFromString(b.amount));
    assert.is(s.spend["USD"], BigDecimal.format(BigDecimal.normalize(total)));
    const billing = readFileSync(join(m.outputsDir, "billing.json"), "utf8");
    assert.match(billing, BigDecimal.format(BigDecimal.normalize(total)));
  } finally {
    tmp.remove();
  }
});

t.run();
