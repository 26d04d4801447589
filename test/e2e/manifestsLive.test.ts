// Every manifest in manifests/ (the demo included) run as a user would against the live
// service's answers: the built CLI, `omnibatch emulator` started as its own process with
// its defaults (the name kling, 20 ids per query, image not-found 400/1201, unified queries
// holding image tasks, Retry-After, x-request-id), `--base-url` pointing at it. Each run
// ends with exit 0, no task rejected, every external id created exactly once (the
// emulator's own count, GET /_emulator/stats), and the emulator refused no create.

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { EmulatorStats } from "../../src/emulator/Emulator.js";
import { defaultElements } from "../../src/emulator/ElementLibrary.js";
import { lockfilePathFor } from "../../src/manifest/lockfilePath.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { committedFiles, copyManifests } from "../checkoutFiles.js";
import { bin } from "./runFixture.js";

// The manifests git holds: not a lockfile, review file or manifest a user's commands left beside them.
const committed = committedFiles("manifests");
const t = suite("manifests/ against the emulator's live answers");

let child: ChildProcess | undefined;
let url = "";
let dir = "";

t.before(async () => {
  dir = mkdtempSync(join(tmpdir(), "omnibatch-live-"));
  // The manifests write to ../outputs/<name>: a copy keeps the checkout clean.
  copyManifests(dir, committed);
  // The account's element library holds the elements character.yaml names (account data,
  // not an answer of the service). Only the task durations are shortened; every answer is
  // the emulator's default.
  const elements = join(dir, "elements.json");
  writeFileSync(
    elements,
    JSON.stringify([
      ...defaultElements,
      { id: "810234", name: "Mara", element_type: "multi_image_elements" },
      { id: "810377", name: "Red Jacket", element_type: "multi_image_elements" },
    ]),
  );
  child = spawn(process.execPath, [bin, "emulator", "--port", "0", "--time-scale", "0.02", "--elements", elements], { stdio: ["ignore", "pipe", "pipe"] });
  url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`the emulator did not start: ${out}`)), 30_000);
    child!.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        assert.match(out, "service 'kling'");
        resolve(m[1]!);
      }
    });
    child!.once("exit", () => reject(new Error(`the emulator exited: ${out}`)));
  });
});

t.after(() => {
  child?.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

const stats = async (): Promise<EmulatorStats> => (await (await fetch(`${url}/_emulator/stats`)).json()) as EmulatorStats;

for (const name of committed.filter((f) => /^[^/]+\.yaml$/.test(f)).sort()) {
  t(`manifests/${name}: exit 0 with --base-url, nothing rejected, each external id created once`, async () => {
    await fetch(`${url}/_emulator/reset`, { method: "POST" });
    const file = join(dir, "manifests", name);
    const run = await execa("node", [bin, "run", file, "--base-url", url, "--yes", "--quiet"], {
      reject: false,
      timeout: 240_000,
      // No OMNIBATCH_SERVICE, no OMNIBATCH_BASE_URL: the defaults (kling) and the flag.
      env: { OMNIBATCH_API_KEY: "omni-dev-key", OMNIBATCH_TIME_SCALE: "0.05", OMNIBATCH_SERVICE: "", OMNIBATCH_BASE_URL: "" },
      extendEnv: false,
    });
    assert.is(run.exitCode, 0, `${run.stdout}\n${run.stderr}`);
    const lock = await readLockFile(lockfilePathFor(file));
    assert.ok(lock, "a lockfile");
    const tasks = Object.entries(lock!.tasks);
    assert.ok(tasks.length > 0);
    assert.equal(tasks.filter(([, task]) => task.state === "rejected").map(([id]) => id), [], "no task rejected");
    assert.ok(tasks.every(([, task]) => task.state === "downloaded"), tasks.map(([id, task]) => `${id} ${task.state}`).join("\n"));
    const s = await stats();
    assert.equal(Object.keys(s.creates).sort(), tasks.map(([id]) => id).sort(), "every task created, nothing else");
    assert.ok(Object.values(s.creates).every((n) => n === 1), JSON.stringify(s.creates));
    // No create refused (a wrong name or path: 1202; a reused id or a bad model: 1201): every
    // create sent made its task, but those the account's full slots turned away (1303).
    const sent = (s.requests["video.create"] ?? 0) + (s.requests["image.create"] ?? 0);
    assert.is(sent, tasks.length + (s.rejections["1303"] ?? 0), `${JSON.stringify(s.requests)} ${JSON.stringify(s.rejections)}`);
    assert.is(s.rejections["1202"] ?? 0, 0, JSON.stringify(s.rejections));
  });
}

t.run();
