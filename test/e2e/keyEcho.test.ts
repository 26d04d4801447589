// A service whose failure and error messages echo the request's Authorization header
// (the emulator's faults.echoAuthorization) must not get the API key into any file or
// any output (issue 9, item 8): lockfile, journal, results.jsonl, billing reports, the
// step summary, stdout and stderr. Every task fails (the emulator's failure rate 1), so
// every failure message carries the echo. The built CLI against a real emulator.

import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { manifestYaml, runCli, workspace } from "./runFixture.js";

const t = suite("omnibatch run: a service echoing the key");

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });

t("failure and error messages echoing Authorization: the key marker is in no file written and no output", async () => {
  const marker = `KEYMARK${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
  const apiKey = `sk-${marker}-secret`;
  const emu = await startEmulator(
    { apiKey, timing: { scale: 0.15 }, slots: { video: 20, image: 40 }, failure: { rate: 1 }, faults: { echoAuthorization: true } },
    { port: 0 },
  );
  const ws = workspace(manifestYaml(`echo${Date.now().toString(36)}`, { subjects: 2, moods: 2 }));
  const stepSummary = join(ws.dir, "step-summary.md");
  writeFileSync(stepSummary, "");
  try {
    const plain = await runCli(ws, ["--base-url", emu.url], { OMNIBATCH_API_KEY: apiKey, GITHUB_STEP_SUMMARY: stepSummary });
    const json = await runCli(ws, ["--base-url", emu.url, "--json"], { OMNIBATCH_API_KEY: apiKey, GITHUB_STEP_SUMMARY: stepSummary });
    assert.is(plain.exitCode, 1, plain.all);
    // The service did echo it: the failure messages came back with the Authorization value in them.
    const lock = readFileSync(ws.lockfile, "utf8");
    assert.match(lock, /\[redacted\]/, "the echoed key was scrubbed, so the echo happened");
    const files = filesUnder(ws.dir);
    assert.ok(files.some((f) => f.endsWith("results.jsonl")), files.join(", "));
    assert.ok(readFileSync(stepSummary, "utf8").length > 0, "the step summary was written");
    for (const file of files) assert.not.ok(readFileSync(file).toString("latin1").includes(marker), `${file} holds the key`);
    for (const [name, text] of [["plain output", plain.all], ["--json output", json.all]] as const) assert.not.ok(text.includes(marker), `${name} holds the key`);
  } finally {
    await emu.close();
    ws.remove();
  }
});

t.run();
