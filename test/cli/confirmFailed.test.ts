// `run --failed` at a terminal asks like any spend: in a real pseudo-terminal (tmux),
// against the emulator as a service, after every still failed, it shows how many new
// attempts it will make and what they cost, sends nothing until the answer is yes, and
// then creates exactly those attempts (new ids).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { bin } from "../e2e/runFixture.js";

const t = suite("run --failed asks before spending");
let emu: RunningEmulator;
let dir: string;
const socket = `omnibatch-failed-${process.pid}`;
const tmux = (...args: string[]) => execa("tmux", ["-L", socket, "-f", "/dev/null", ...args], { reject: false });

const manifest = `version: 1
name: again
outputs: out
budget: { max: 1, currency: USD }
prices: { image: { "1k": 0.02 } }
jobs:
  stills:
    kind: image
    matrix: { subject: [apple, boat, chair] }
    prompt: "a {{ subject }} on a table"
`;

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 }, failure: { rate: 1 } }, { port: 0 });
  dir = mkdtempSync(join(tmpdir(), "omnibatch-failed-"));
  writeFileSync(join(dir, "m.yaml"), manifest);
});
t.after(async () => {
  await tmux("kill-server");
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const screen = async (session: string): Promise<string> => (await tmux("capture-pane", "-p", "-J", "-t", session, "-S", "-200")).stdout;

/** Waits (bounded: 60 s, 200 looks) until the screen matches. */
const waitFor = async (session: string, pattern: RegExp): Promise<string> => {
  let last = "";
  for (let i = 0; i < 200; i++) {
    last = await screen(session);
    if (pattern.test(last)) return last;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`timed out waiting for ${pattern} on the terminal; it shows:\n${last}`);
};

const creates = () => Object.values(emu.stats().creates).reduce((a, b) => a + b, 0);

t("after every still failed, run --failed on a terminal shows 3 new attempts and their cost, waits, and on 'y' creates exactly those (new ids)", async () => {
  const env = { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_BASE_URL: emu.url, OMNIBATCH_TIME_SCALE: "0.05" };
  // Without a terminal nothing asks: every still fails.
  const first = await execa("node", [bin, "run", "m.yaml", "--no-callbacks"], { cwd: dir, reject: false, env, extendEnv: false });
  assert.is(first.exitCode, 1, first.stdout + first.stderr);
  const failed = Object.keys((await readLockFile(join(dir, "m.lock.json")))!.tasks).sort();
  assert.is(failed.length, 3);
  emu.configure({ failure: { rate: 0 } });
  const before = creates();

  const command =
    `cd ${dir} && env OMNIBATCH_API_KEY=${emu.apiKey} OMNIBATCH_TIME_SCALE=0.05 node ${bin} run m.yaml --base-url ${emu.url} --no-callbacks --failed; ` +
    `echo "EXIT=$?"; sleep 120`;
  const r = await tmux("new-session", "-d", "-s", "again", "-x", "200", "-y", "50", command);
  assert.is(r.exitCode, 0, r.stderr);
  const shown = await waitFor("again", /Continue\? \[y\/N\]/);
  assert.match(shown, "--failed: 3 new attempt(s) of failed task(s) (new ids), estimated 0.06 USD");
  assert.match(shown, "This run will create 3 task(s) now (stills 3)");
  assert.match(shown, "budget 1 USD:");
  assert.is(creates(), before, "nothing is sent before the answer");
  await tmux("send-keys", "-t", "again", "y", "Enter");
  const after = await waitFor("again", /EXIT=\d+/);
  assert.match(after, "EXIT=0");
  assert.is(creates(), before + 3);
  const lock = (await readLockFile(join(dir, "m.lock.json")))!;
  const fresh = Object.entries(lock.tasks).filter(([id]) => !failed.includes(id));
  assert.is(fresh.length, 3);
  assert.ok(fresh.every(([, x]) => x.attempt === 2 && x.state === "downloaded"));
  for (const id of failed) assert.is(lock.tasks[id]!.state, "failed");
});

t.run();
