// What an emulated run that makes results deleted from disk again (its kept emulated
// service deleted too) was charged: the emulator charges each remade task again, and the live line and the summary both say
// so, with the amount the records hold of those charges. The built CLI, --emulate, CI lines.

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { amountOf, formatAmount, sum } from "../../src/money/Money.js";
import type { LockTask } from "../../src/state/LockFile.js";
import { bin } from "../e2e/runFixture.js";

const t = suite("emulated spend");

/** The cash these records hold (image charges name no currency). */
const cashOf = (records: readonly LockTask[]): string =>
  formatAmount(sum(records.flatMap((r) => r.billing.filter((b) => b.charge_type === "cash").map((b) => amountOf(b.amount)))));

const manifest = `version: 1
name: spend
outputs: out
concurrency: 2
jobs:
  stills:
    kind: image
    matrix:
      subject: [apple, boat, chair, door]
    prompt: "a {{ subject }} on a table"
`;

const dirs: string[] = [];
t.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const run = (dir: string) =>
  execa("node", [bin, "run", "m.yaml", "--yes", "--emulate"], {
    cwd: dir,
    reject: false,
    env: { PATH: process.env["PATH"] ?? "", CI: "true", OMNIBATCH_TIME_SCALE: "0.05", OMNIBATCH_PROGRESS_EVERY: "100ms" },
    extendEnv: false,
  });

/** The `… this run` part of the last CI status line. */
const lastLiveSpend = (out: string): string | undefined => [...out.matchAll(/^\[[\dmh]+s\] stills .*? · (.*? this run|nothing charged yet)/gm)].at(-1)?.[1];

t("results deleted from disk and made again: the live line and the summary both say what the emulator charged for them", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-spend-"));
  dirs.push(dir);
  writeFileSync(join(dir, "m.yaml"), manifest);
  const first = await run(dir);
  assert.is(first.exitCode, 0, first.stdout);
  const lockfile = join(dir, "m.emulate.lock.json");
  const all = cashOf(Object.values((await readLockFile(lockfile))!.tasks));
  assert.ok(Number(all) > 0, "the emulator charges images");
  assert.is(lastLiveSpend(first.stdout), `${all} this run`, first.stdout);
  assert.match(first.stdout, `spend:     ${all} this run, ${all} in all (emulated, not real)`);

  const stills = join(dir, "out-emulated", "stills");
  const gone = readdirSync(stills).sort().slice(0, 2);
  for (const d of gone) for (const f of readdirSync(join(stills, d))) if (f.endsWith(".png")) rmSync(join(stills, d, f));
  // The emulated service's kept state too: a new emulated service, which cannot give the files again.
  rmSync(join(dir, "m.emulate.state.json"));
  const second = await run(dir);
  assert.is(second.exitCode, 0, second.stdout);
  assert.is(second.stdout.split("creating it again on the emulator").length - 1, 2, second.stdout);
  // The remade tasks' records hold the emulator's new answers: their charges are this run's.
  const after = (await readLockFile(lockfile))!;
  const remade = Object.values(after.tasks).filter((r) => gone.includes(r.dir.split("/").at(-1)!));
  assert.is(remade.length, 2);
  const charged = cashOf(remade);
  assert.ok(Number(charged) > 0);
  assert.is(lastLiveSpend(second.stdout), `${charged} this run`, second.stdout);
  assert.match(second.stdout, `spend:     ${charged} this run`);
  assert.not.match(second.stdout, "nothing charged\n");
});

t.run();
