// A lockfile line of another manifest (another `name`: pasted or merged from its lockfile,
// or left from before a rename) is said, never silently taken in: the built CLI's run,
// status and plan warn naming it `file:line`; the line is kept byte for byte (a run
// rewrites the file around it, never drops it); its charge counts in this manifest's
// spend to date, as the warning says; and it is never taken as one of this manifest's
// tasks (each of those is made and paid as usual). Against the emulator on loopback.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin, manifestHead, stillsJob, workspace } from "./runFixture.js";

const t = suite<{ emu: RunningEmulator }>("lines of another manifest", {} as never);
t.before(async (ctx) => {
  ctx.emu = await startEmulator({ timing: { scale: 0.1 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async (ctx) => {
  await ctx.emu.close();
});

const summaryOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!);
// A line written by another manifest ("other"): its job named, as the writer does for an id of another name.
const FOREIGN_ID = "other-stills-abcdefghijklmnopqrst";
const foreignLine = (at: number) =>
  JSON.stringify({ id: FOREIGN_ID, job: "stills", kind: "image", at: [at], hash: "f".repeat(64), dir: "stills/elsewhere", bill: [{ cash: "0.5", cash_type: "balance", currency: "USD" }] });

t("a foreign line is warned about with its file:line by run, status and plan, kept as it is, and its charge counted; this manifest's tasks are made as usual", async ({ emu }) => {
  const ws = workspace(`${manifestHead("mine")}${stillsJob(["apple", "boat"])}`);
  try {
    const cli = (args: string[]) =>
      execa("node", [bin, ...args], {
        cwd: ws.dir,
        reject: false,
        extendEnv: false,
        env: {
          PATH: process.env.PATH ?? "",
          OMNIBATCH_BASE_URL: emu.url,
          OMNIBATCH_API_KEY: emu.apiKey,
          OMNIBATCH_TIME_SCALE: "0.05",
        },
      });
    // The other manifest's line is there before this manifest ever ran.
    writeFileSync(ws.lockfile, `${JSON.stringify({ lockfile_version: 3, name: "mine" })}\n\n${foreignLine(1_700_000_000_000)}\n`);
    const warning = /m\.lock\.json:3: task other-stills-abcdefghijklmnopqrst \(job stills\)[^\n]*Kept as it is, never deleted; its charges count in this manifest's spend to date/;

    const plan = await cli(["plan", ws.manifest]);
    assert.is(plan.exitCode, 0, plan.stderr);
    assert.match(plan.stderr, warning);
    assert.match(plan.stdout, /\+ mine-stills-/);

    const run = await cli(["run", ws.manifest, "--json"]);
    assert.is(run.exitCode, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /"type":"notice"[^\n]*"level":"warn"[^\n]*a line of another manifest/);
    assert.match(run.stdout, warning);
    const summary = summaryOf(run.stdout);
    assert.is(summary.created, 2, "both of this manifest's tasks were made");
    assert.is(summary.downloaded, 2);
    const lock = (await readLockFile(ws.lockfile))!;
    const mine = Object.entries(lock.tasks).filter(([id]) => id.startsWith("mine-stills-"));
    assert.is(mine.length, 2);
    const charged = mine.flatMap(([, task]) => task.billing).reduce((n, b) => n + Number(b.amount), 0);
    // The spend to date: this manifest's charges and the foreign line's 0.5.
    assert.ok(charged > 0);
    assert.is(Number(summary.spend.USD).toFixed(4), (charged + 0.5).toFixed(4), JSON.stringify(summary.spend));

    // Kept byte for byte after the run rewrote the file.
    const text = readFileSync(ws.lockfile, "utf8");
    assert.ok(text.split("\n").includes(foreignLine(1_700_000_000_000)), text);
    const after = text.split("\n").indexOf(foreignLine(1_700_000_000_000)) + 1;

    // A rerun with nothing to do: told again each time.
    for (let i = 0; i < 2; i++) {
      const rerun = await cli(["run", ws.manifest, "--json"]);
      assert.is(rerun.exitCode, 0, rerun.stderr + rerun.stdout);
      assert.is(summaryOf(rerun.stdout).created, 0);
      assert.match(rerun.stdout, new RegExp(`m\\.lock\\.json:${after}: task ${FOREIGN_ID}`), `rerun ${i + 1}`);
    }

    const status = await cli(["status", ws.manifest]);
    assert.is(status.exitCode, 0, status.stderr);
    assert.match(status.stderr, new RegExp(`m\\.lock\\.json:${after}: task ${FOREIGN_ID}`));
  } finally {
    ws.remove();
  }
});

t.run();
