// Ask before spending, as a person at a terminal sees it: `run` in a real pseudo-terminal
// (tmux) against the emulator as a service shows what it will create and cost, and
// sends nothing until the answer is yes; "no" exits 3 with nothing sent; --yes and
// --emulate never ask; --recreate-lost shows what it would make again and asks too.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { bin } from "../e2e/runFixture.js";

const t = suite("run asks before spending");
let emu: RunningEmulator;
let dir: string;
const socket = `omnibatch-test-${process.pid}`;
const tmux = (...args: string[]) => execa("tmux", ["-L", socket, "-f", "/dev/null", ...args], { reject: false });

const manifest = `version: 1
name: ask
outputs: out
budget: { max: 1, currency: USD }
prices: { image: { "1k": 0.02 }, video: { "720p": 0.07 } }
jobs:
  stills:
    kind: image
    matrix: { subject: [apple, boat, chair] }
    prompt: "a {{ subject }} on a table"
  clips:
    kind: video
    for_each: stills.outputs
    first_frame: "{{ item.url }}"
    prompt: "it turns"
    settings: { resolution: 720p, duration: 5, aspect_ratio: "1:1" }
`;

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.05 } }, { port: 0 });
  dir = mkdtempSync(join(tmpdir(), "omnibatch-confirm-"));
  writeFileSync(join(dir, "m.yaml"), manifest);
});
t.after(async () => {
  await tmux("kill-server");
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the command in a fresh tmux session (a real terminal), keeping the pane after it exits. */
const start = async (session: string, args: string): Promise<void> => {
  const command =
    `cd ${dir} && env OMNIBATCH_API_KEY=${emu.apiKey} OMNIBATCH_TIME_SCALE=0.05 node ${bin} run m.yaml ${args.includes("--emulate") ? "" : `--base-url ${emu.url} `}${args}; ` +
    `echo "EXIT=$?"; sleep 120`;
  const r = await tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50", command);
  assert.is(r.exitCode, 0, r.stderr);
};

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

const creates = () => Object.keys(emu.stats().creates).filter((id) => id.startsWith("ask-")).length;

t("on a terminal, run shows the plan and its cost and waits; 'n' sends nothing and exits 3", async () => {
  await start("no", "--no-callbacks");
  const shown = await waitFor("no", /Continue\? \[y\/N\]/);
  assert.match(shown, "This run will create 3 task(s) now (stills 3)");
  assert.match(shown, "and about 3 downstream task(s) as upstream results arrive (clips 3).");
  assert.match(shown, "Estimated cost: 0.06 USD now, 1.05 USD downstream (from the manifest's prices).");
  assert.match(shown, "budget 1 USD: 0 spent (every charge in the lockfile counts), 1.11 estimated for 6 task(s) left: about 1 clips task(s) would not be made.");
  // The question is asked before anything is sent.
  await new Promise((r) => setTimeout(r, 500));
  assert.is(creates(), 0, "nothing is created while the question waits");
  await tmux("send-keys", "-t", "no", "n", "Enter");
  const after = await waitFor("no", /EXIT=\d+/);
  assert.match(after, "EXIT=3");
  assert.match(after, "not confirmed, nothing was sent");
  assert.is(creates(), 0);
});

t("'y' goes ahead: the run creates and finishes", async () => {
  await start("yes", "--no-callbacks --max-wait 60s");
  await waitFor("yes", /Continue\? \[y\/N\]/);
  await tmux("send-keys", "-t", "yes", "y", "Enter");
  const after = await waitFor("yes", /EXIT=\d+/);
  assert.ok(creates() >= 3, `created ${creates()}\n${after}`);
  assert.match(after, /EXIT=[04]/, "done, or stopped by the budget (exit 4) as the plan said");
});

t("--yes and --emulate never ask, on a terminal too", async () => {
  writeFileSync(join(dir, "m.yaml"), manifest.replace("apple, boat, chair", "apple, boat, chair, door"));
  await start("flag", "--yes --no-callbacks --max-wait 60s");
  const flagged = await waitFor("flag", /EXIT=\d+/);
  assert.not.match(flagged, "Continue?");
  await start("emu", "--emulate --max-wait 60s");
  const emulated = await waitFor("emu", /EXIT=\d+/);
  assert.not.match(emulated, "Continue?");
  assert.match(emulated, /EXIT=[04]/);
});

t("run --recreate-lost on a terminal lists the lost tasks with the cost and asks; 'n' sends nothing and exits 3", async () => {
  // The results of the runs above, gone here and deleted at the service. The budget is
  // raised: whether the runs above stopped at it (exit 4) must not decide this test's exit.
  writeFileSync(join(dir, "m.yaml"), manifest.replace("max: 1,", "max: 100,"));
  rmSync(join(dir, "out"), { recursive: true, force: true });
  emu.advanceClock(31 * 86_400_000);
  // A run finds out what is lost (exit 6, nothing paid); only then is there something to show.
  const found = await execa("node", [bin, "run", "m.yaml", "--base-url", emu.url, "--no-callbacks", "--quiet"], {
    cwd: dir,
    reject: false,
    env: { OMNIBATCH_API_KEY: emu.apiKey, OMNIBATCH_TIME_SCALE: "0.05" },
    extendEnv: false,
  });
  assert.is(found.exitCode, 6, found.stderr);
  const before = creates();
  await start("lost", "--recreate-lost --no-callbacks");
  const shown = await waitFor("lost", /Pay to make them again\? \[y\/N\]/);
  assert.match(shown, /--recreate-lost: \d+ lost result\(s\) of \d+ task\(s\) are made again, as new attempts with new ids/);
  assert.match(shown, "stills subject=apple  ~0.02 USD");
  assert.match(shown, /Estimated cost: 0\.0[68] USD/);
  await new Promise((r) => setTimeout(r, 500));
  assert.is(creates(), before, "nothing is created while the question waits");
  await tmux("send-keys", "-t", "lost", "n", "Enter");
  const after = await waitFor("lost", /EXIT=\d+/);
  assert.match(after, "EXIT=3");
  assert.match(after, "not confirmed, nothing was sent");
  assert.is(creates(), before);
});

t.run();
