// The live counts of a run that sends again what an earlier run recorded: a task is one
// task however often it goes out. The built CLI against the emulator, as a user runs it:
// eight stills, some failed by an earlier run and tried again with --failed (on a
// terminal, the live block), some left "outcome unknown" by an earlier run and sent again
// once the service shows no trace of them (CI lines), and results deleted from disk that
// an emulated run makes again. Every count reads n/8, never more than eight.

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { encodeLockFile } from "../../src/state/LockfileText.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin } from "../e2e/runFixture.js";

const t = suite("live counts of tasks sent again");

const subjects = ["apple", "boat", "chair", "door", "egg", "fork", "gate", "hat"];
/** Eight stills, one per row of subjects.csv. */
const manifest = `version: 1
name: resent
outputs: out
concurrency: 2
jobs:
  stills:
    kind: image
    matrix:
      subject: { rows: subjects.csv }
    prompt: "a {{ subject.name }} on a table {{ subject.note }}"
`;
const rows = (failing: number) => `name,note\n${subjects.map((s, i) => `${s},${i < failing ? "[fail]" : ""}`).join("\n")}\n`;

const dirs: string[] = [];
const folder = (failing = 0): string => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-resent-"));
  writeFileSync(join(dir, "m.yaml"), manifest);
  writeFileSync(join(dir, "subjects.csv"), rows(failing));
  dirs.push(dir);
  return dir;
};

const cli = (dir: string, args: string[], env: Record<string, string> = {}) =>
  execa("node", [bin, "run", "m.yaml", "--yes", ...args], {
    cwd: dir,
    reject: false,
    env: { PATH: process.env["PATH"] ?? "", CI: "true", OMNIBATCH_TIME_SCALE: "0.05", OMNIBATCH_PROGRESS_EVERY: "200ms", ...env },
    extendEnv: false,
  });

/** The `stills d/n done` counts of every CI status line. */
const ciCounts = (out: string): Array<[number, number]> =>
  [...out.matchAll(/^\[[\dmh]+s\] stills (\d+)\/(\d+) done/gm)].map((m) => [Number(m[1]), Number(m[2])]);

let emu: RunningEmulator | undefined;
const socket = `omnibatch-resent-${process.pid}`;
const tmux = (...args: string[]) => execa("tmux", ["-L", socket, "-f", "/dev/null", ...args], { reject: false });

t.after(async () => {
  await tmux("kill-server");
  await emu?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

t("on a terminal: tasks an earlier run left failed, tried again with --failed, are counted once (n/8, never n/11)", async () => {
  emu = await startEmulator({ timing: { scale: 0.3 } }, { port: 0 });
  const dir = folder(3);
  const env = { OMNIBATCH_API_KEY: emu.apiKey };
  const first = await cli(dir, ["--base-url", emu.url, "--no-callbacks"], env);
  assert.is(first.exitCode, 1, first.stdout);
  assert.match(first.stdout, /stills\s+8\s+5\s+3\s/);
  // The service no longer fails them, and takes a few seconds each: the block is on the screen a while.
  emu.configure({ failure: { marker: "" }, timing: { scale: 3 } });
  const command = `cd ${dir} && env OMNIBATCH_API_KEY=${emu.apiKey} OMNIBATCH_TIME_SCALE=0.05 node ${bin} run m.yaml --failed --base-url ${emu.url} --yes --no-callbacks; echo "EXIT=$?"; sleep 120`;
  const r = await tmux("new-session", "-d", "-s", "resent", "-x", "160", "-y", "50", command);
  assert.is(r.exitCode, 0, r.stderr);
  const screen = async () => (await tmux("capture-pane", "-p", "-J", "-t", "resent", "-S", "-200")).stdout;
  const blocks = new Set<string>();
  let live = "";
  // Bounded: 90 s, 450 looks.
  for (let i = 0; i < 450; i++) {
    live = await screen();
    for (const m of live.matchAll(/^\s+stills\s+(\d+\/\d+) done.*$/gm)) blocks.add(m[0]!.trim());
    if (/EXIT=\d+/.test(live)) break;
    await new Promise((res) => setTimeout(res, 200));
  }
  assert.match(live, "EXIT=0", live);
  // --failed makes the three again: the start line says so (to create, not failed).
  assert.match(live, "resuming: 5 done, 0 in flight at the service, 3 to create");
  assert.ok(blocks.size > 0, `the live block was never on the screen:\n${live}`);
  for (const b of blocks) assert.match(b, /^stills\s+\d\/8 done/, [...blocks].join("\n"));
  // While the three went again, the block showed them in flight or queued, not failed and new at once.
  assert.ok([...blocks].some((b) => /^stills\s+[5-7]\/8 done\s+[1-3] in flight/.test(b)), [...blocks].join("\n"));
  assert.match(live, /stills\s+8\s+8\s+0\s/);
});

t("CI lines: tasks an earlier run left with an unknown outcome, sent again when the service shows none of them, are counted once", async () => {
  await emu?.close();
  emu = await startEmulator({ timing: { scale: 0.3 } }, { port: 0 });
  const dir = folder();
  const env = { OMNIBATCH_API_KEY: emu.apiKey };
  const first = await cli(dir, ["--base-url", emu.url, "--no-callbacks"], env);
  assert.is(first.exitCode, 0, first.stdout);
  // As a run killed right after writing three intents leaves them: `submitting`, no task id,
  // and a service that never got them (it forgets every task).
  const lockfile = join(dir, "m.lock.json");
  const lock = (await readLockFile(lockfile))!;
  const ids = Object.keys(lock.tasks).sort().slice(0, 3);
  const tasks = { ...lock.tasks };
  for (const id of ids) {
    const { task_id: _id, created_at: _c, ...rest } = tasks[id]!;
    tasks[id] = { ...rest, state: "submitting", outputs: [], billing: [] } as never;
  }
  const header = JSON.parse((await readFile(lockfile, "utf8")).split("\n")[0]!) as { service?: string };
  await writeFile(lockfile, encodeLockFile(lock.name, tasks, header.service));
  emu.reset();
  const second = await cli(dir, ["--base-url", emu.url, "--no-callbacks"], env);
  assert.is(second.exitCode, 0, second.stdout);
  assert.match(second.stdout, "resuming: 5 done, 3 in flight at the service, 0 to create");
  assert.match(second.stdout, "not at the service well after its create; sending it again");
  const counts = ciCounts(second.stdout);
  assert.ok(counts.length >= 2, second.stdout);
  for (const [done, total] of counts) {
    assert.is(total, 8, second.stdout);
    assert.ok(done >= 5 && done <= 8, second.stdout);
  }
  assert.equal(counts.at(-1), [8, 8], second.stdout);
  const creates = emu.stats().creates;
  assert.equal(Object.keys(creates).sort(), ids, "the three sent again, nothing else");
  for (const id of ids) assert.is(creates[id], 1, id);
});

t("CI lines: results deleted from disk that an emulated run makes again are counted once", async () => {
  const dir = folder();
  const first = await cli(dir, ["--emulate"]);
  assert.is(first.exitCode, 0, first.stdout);
  const stills = join(dir, "out-emulated", "stills");
  const gone = readdirSync(stills).slice(0, 2);
  for (const d of gone) for (const f of readdirSync(join(stills, d))) if (f.endsWith(".png")) rmSync(join(stills, d, f));
  // The emulated service's kept state too: a new emulated service, which cannot give the files again.
  rmSync(join(dir, "m.emulate.state.json"));
  const second = await cli(dir, ["--emulate"]);
  assert.is(second.exitCode, 0, second.stdout);
  assert.match(second.stdout, "creating it again on the emulator");
  const counts = ciCounts(second.stdout);
  assert.ok(counts.length >= 1, second.stdout);
  for (const [, total] of counts) assert.is(total, 8, second.stdout);
  assert.equal(counts.at(-1), [8, 8], second.stdout);
});

t.run();
