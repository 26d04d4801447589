// `omnibatch run` as a user runs it (the built CLI): the demo on --emulate, NDJSON
// output, a second run that does nothing, exit 2 for a missing key or a bad flag,
// and an API key that never appears in any output.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { assertAllResults, bin, manifestYaml, runCli, workspace } from "./runFixture.js";
import { copyManifests } from "../checkoutFiles.js";

let emu: RunningEmulator;
const t = suite("omnibatch run");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });

t("the demo completes on --emulate (exit 0, files match the lockfile, reports written); a second run creates and downloads nothing", async () => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-demo-"));
  try {
    copyManifests(root);
    const manifest = join(root, "manifests", "demo.yaml");
    const first = await execa("node", [bin, "run", manifest, "--emulate", "--json"], { cwd: root, reject: false });
    assert.is(first.exitCode, 0, first.stderr);
    const events = first.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const summary = events.at(-1);
    assert.is(summary.type, "summary");
    assert.ok(summary.created > 0);
    assert.ok(events.every((e) => typeof e.type === "string"), "stdout holds NDJSON events only");
    // --emulate keeps its own lockfile and outputs folder; the real ones are never written.
    assert.is(summary.lockfile, join(root, "manifests", "demo.emulate.lock.json"));
    assert.is(summary.outputs, join(root, "outputs", "demo-emulated"));
    assert.not.ok(existsSync(join(root, "manifests", "demo.lock.json")));
    assert.not.ok(existsSync(join(root, "outputs", "demo")));
    const ws = { lockfile: join(root, "manifests", "demo.emulate.lock.json"), outputs: summary.outputs } as never;
    await assertAllResults(ws);
    for (const f of ["results.jsonl", "billing.csv", "billing.json", "billing.md"]) {
      assert.ok(summary.reports.some((r: string) => r.endsWith(f)), f);
    }
    const second = await execa("node", [bin, "run", manifest, "--emulate", "--json"], { cwd: root, reject: false });
    assert.is(second.exitCode, 0);
    const again = JSON.parse(second.stdout.trim().split("\n").at(-1)!);
    assert.is(again.created, 0);
    assert.is(again.adopted, 0);
    assert.is(again.downloaded, 0);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

t("without OMNIBATCH_API_KEY (and without --emulate) the run exits 2 with a clear message and writes nothing", async () => {
  const ws = workspace(manifestYaml("nokey"));
  try {
    const r = await runCli(ws, ["--base-url", emu.url]);
    assert.is(r.exitCode, 2);
    assert.match(r.all ?? "", "OMNIBATCH_API_KEY");
    assert.not.match(r.all ?? "", /\n\s+at /);
    assert.equal(readdirSync(ws.dir), ["m.yaml"]);
  } finally {
    ws.remove();
  }
});

t("a bad --max-wait is a usage error (exit 2)", async () => {
  const ws = workspace(manifestYaml("badflag"));
  try {
    const r = await runCli(ws, ["--emulate", "--max-wait", "soon"]);
    assert.is(r.exitCode, 2);
    assert.match(r.all ?? "", "--max-wait");
  } finally {
    ws.remove();
  }
});

t("the API key appears in no file, no stdout and no stderr line (a normal run and a refused one)", async () => {
  const marker = `sk-omni-MARKER-${Math.random().toString(36).slice(2)}`;
  const keyed = await startEmulator({ apiKey: marker, timing: { scale: 0.15 } }, { port: 0 });
  const ws = workspace(manifestYaml("secret"));
  const ws2 = workspace(manifestYaml("secret2"));
  try {
    const env = { OMNIBATCH_API_KEY: marker };
    const ok = await runCli(ws, ["--base-url", keyed.url, "--json"], env);
    assert.is(ok.exitCode, 0, ok.all);
    keyed.configure({ billing: { balance: "0.5" } });
    const refused = await runCli(ws2, ["--base-url", keyed.url], env);
    assert.is(refused.exitCode, 5, refused.all);
    const wrongKey = await runCli(ws2, ["--base-url", keyed.url], { OMNIBATCH_API_KEY: `${marker}-wrong` });
    assert.is(wrongKey.exitCode, 5, wrongKey.all);
    for (const out of [ok.all, refused.all, wrongKey.all]) assert.not.ok((out ?? "").includes(marker), "key in output");
    for (const file of [...filesUnder(ws.dir), ...filesUnder(ws2.dir)]) {
      assert.not.ok(readFileSync(file).includes(marker), `key in ${file}`);
    }
  } finally {
    await keyed.close();
    ws.remove();
    ws2.remove();
  }
});

t.run();
