// The start line and the live counts tell what the run will do: the built CLI on the
// in-process emulator (--emulate, CI lines), as a user runs it. Eight stills, three of
// them refused for content risk by the first run (the emulator fails "[fail]" prompts).
// A rerun does not try those again unless the job asks (retry_content_risk): nothing
// "to create", nothing left queued. A rerun with --failed does try them: "3 to create",
// and the counts stay n/8.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { bin } from "../e2e/runFixture.js";

const t = suite("start totals");

const subjects = ["apple", "boat", "chair", "door", "egg", "fork", "gate", "hat"];
const manifest = (retry: string) => `version: 1
name: totals
outputs: out
concurrency: 2
jobs:
  stills:
    kind: image
${retry}    matrix:
      subject: { rows: subjects.csv }
    prompt: "a {{ subject.name }} on a table {{ subject.note }}"
`;

const dirs: string[] = [];
/** A folder with the manifest and eight rows, the first three failing for content risk. */
const folder = (retry = ""): string => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-totals-"));
  writeFileSync(join(dir, "m.yaml"), manifest(retry));
  writeFileSync(join(dir, "subjects.csv"), `name,note\n${subjects.map((s, i) => `${s},${i < 3 ? "[fail]" : ""}`).join("\n")}\n`);
  dirs.push(dir);
  return dir;
};

const cli = (dir: string, args: string[]) =>
  execa("node", [bin, ...args], {
    cwd: dir,
    reject: false,
    env: { PATH: process.env["PATH"] ?? "", CI: "true", OMNIBATCH_TIME_SCALE: "0.05", OMNIBATCH_PROGRESS_EVERY: "100ms" },
    extendEnv: false,
  });
const run = (dir: string, ...args: string[]) => cli(dir, ["run", "m.yaml", "--yes", "--emulate", ...args]);

/** Every CI status line's stills part: `5/8 done, 2 in flight, 1 queued`. */
const ciLines = (out: string): string[] => [...out.matchAll(/^\[[\dmh]+s\] (stills \d+\/\d+ done[^·]*)/gm)].map((m) => m[1]!.trim());

t.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

t("retry_failed without retry_content_risk: content-risk failures are not to create at the start, and never queued", async () => {
  const dir = folder("    retry_failed: 1\n");
  const first = await run(dir);
  assert.is(first.exitCode, 1, first.stdout);
  assert.match(first.stdout, /stills\s+8\s+5\s+3\s/);
  const plan = await cli(dir, ["plan", "m.yaml", "--emulate", "--all"]);
  assert.match(plan.stdout, /stills\s+0\s+0\s+8\s+0\s+0/, plan.stdout);
  assert.match(plan.stdout, "content risk: not retried without retry_content_risk");
  const second = await run(dir);
  assert.is(second.exitCode, 1, second.stdout);
  assert.match(second.stdout, "resuming: 5 done, 0 in flight at the service, 0 to create, 3 failed");
  const lines = ciLines(second.stdout);
  assert.ok(lines.length >= 1, second.stdout);
  for (const l of lines) assert.is(l, "stills 5/8 done, 3 failed", second.stdout);
});

t("retry_failed with retry_content_risk: the same failures are to create at the start, and tried again", async () => {
  const dir = folder("    retry_failed: 1\n    retry_content_risk: true\n");
  // The first run already tries each again once (and the emulator refuses it again).
  const first = await run(dir);
  assert.is(first.exitCode, 1, first.stdout);
  assert.match(first.stdout, "trying again as");
  const second = await run(dir);
  assert.match(second.stdout, "resuming: 5 done, 0 in flight at the service, 0 to create, 3 failed", "both attempts used");
});

t("--failed: the start line counts the new attempts as to create, and the live counts stay n/8", async () => {
  const dir = folder();
  const first = await run(dir);
  assert.is(first.exitCode, 1, first.stdout);
  const again = await run(dir, "--failed");
  // The emulator refuses them again: exit 1, each tried once more.
  assert.is(again.exitCode, 1, again.stdout);
  assert.match(again.stdout, "resuming: 5 done, 0 in flight at the service, 3 to create\n");
  const lines = ciLines(again.stdout);
  assert.ok(lines.length >= 1, again.stdout);
  for (const l of lines) assert.match(l, /^stills 5\/8 done/, again.stdout);
  assert.is(lines.at(-1), "stills 5/8 done, 3 failed", again.stdout);
  assert.match(again.stdout, /stills\s+8\s+5\s+3\s/);
});

t("--failed --where: only the selected failure is to create; the others stay failed", async () => {
  const dir = folder();
  assert.is((await run(dir)).exitCode, 1);
  const again = await run(dir, "--failed", "--where", "subject.name=boat");
  assert.match(again.stdout, "resuming: 5 done, 0 in flight at the service, 1 to create, 2 failed");
  const lines = ciLines(again.stdout);
  assert.ok(lines.length >= 1, again.stdout);
  for (const l of lines) assert.match(l, /^stills 5\/8 done/, again.stdout);
  assert.is(lines.at(-1), "stills 5/8 done, 3 failed", again.stdout);
});

t.run();
