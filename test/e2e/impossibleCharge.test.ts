// A service that lies about money (issue 27, item 11): a proxy in front of the real
// emulator (loopback) answers every finished task with a charge that cannot be true
// (negative, not a number, absurdly large). The run must not ask again forever: it stops
// submission at once and ends (exit 5) naming the task and the answer; the charge counts
// in no sum (spend to date, the budget, billing.csv) and is shown as refused (the
// summary, billing.md). Bounded: the CLI is killed after 40 s (a hang fails the test).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { startProxy } from "./hostileProxy.js";
import { runCli, workspace } from "./runFixture.js";

let emulator: RunningEmulator;
const t = suite("a charge that cannot be true");

t.before(async () => {
  emulator = await startEmulator({ timing: { scale: 0.05 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await emulator.close();
});

const yaml = (name: string) => `version: 1
name: ${name}
outputs: out
concurrency: 1
budget: { max: 5, currency: USD }
prices:
  video: { "720p": 0.07, "1080p": 0.1 }
defaults:
  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }
jobs:
  clips:
    kind: video
    matrix:
      mood: [calm, busy, dark]
    prompt: "a {{ mood }} street"
`;

/** Every billing entry of every task in a query answer gets `amount`. */
const lyingAbout = (amount: unknown) => (_req: unknown, answer: Record<string, unknown>) => {
  const data = answer["data"];
  const tasks = Array.isArray(data) ? data : data && typeof data === "object" && Array.isArray((data as { result?: unknown }).result) ? (data as { result: unknown[] }).result : [];
  for (const task of tasks as { billing?: { amount: unknown }[] }[]) for (const b of task.billing ?? []) b.amount = amount;
  return answer;
};

const creates = () => Object.values(emulator.stats().creates).reduce((a, b) => a + b, 0);

for (const [what, amount, shown] of [
  ["negative", "-5", '"-5"'],
  ["not a number", "NaN", '"NaN"'],
  ["absurdly large", "99999999", '"99999999"'],
  ["a negative JSON number", -0.5, "-0.5"],
] as const) {
  t(`a charge ${what} (${String(amount)}): submission stops at once, the run ends non-zero naming the task and the answer, the charge counts nowhere`, async () => {
    const proxy = await startProxy(emulator.url, { rewrite: lyingAbout(amount) });
    const ws = workspace(yaml(`lies${creates()}`));
    const before = creates();
    try {
      const started = Date.now();
      const run = runCli(ws, ["--base-url", proxy.url, "--no-callbacks", "--yes"], { OMNIBATCH_API_KEY: emulator.apiKey });
      const timer = setTimeout(() => run.kill("SIGKILL"), 40_000);
      const result = await run;
      clearTimeout(timer);
      assert.ok(Date.now() - started < 40_000, `the run ended by itself (${Date.now() - started} ms): ${result.all}`);
      assert.is(result.exitCode, 5, result.all);
      const lock = (await readLockFile(ws.lockfile))!;
      const ids = Object.keys(lock.tasks);
      assert.is(creates() - before, 1, `one task created, then submission stopped at once: ${result.all}`);
      const created = ids.find((id) => lock.tasks[id]!.task_id !== undefined)!;
      assert.ok(created, "the created task is recorded");
      // Named: the task and what the answer said.
      assert.match(result.all!, created);
      assert.ok(result.all!.includes(shown), result.all);
      assert.match(result.all!, /refused/);
      // Kept out of every sum: no record holds the charge, spend to date is 0.
      for (const task of Object.values(lock.tasks)) assert.equal(task.billing, [], "no charge recorded");
      assert.match(result.all!, /nothing charged|\b0 USD in all/);
      const md = readFileSync(join(ws.outputs, "billing.md"), "utf8");
      assert.match(md, /[Rr]efused charge/);
      assert.ok(md.includes(created), md);
      const csv = readFileSync(join(ws.outputs, "billing.csv"), "utf8");
      assert.not.ok(csv.includes(String(amount)), "billing.csv sums no refused charge");
    } finally {
      ws.remove();
      await proxy.close();
    }
  });
}

t.run();
