// Provenance end to end: the demo manifest run on the emulator by the built CLI, then
// `omnibatch report`: every results.jsonl line carries the request as sent (prompt after
// label rewriting, settings, inputs by path and sha256, never base64), its manifest place
// and matrix values; downstream clips name the still they came from (path, sha256) and
// the still names its clips; each task folder's task.json is its line; each job folder's
// metadata.jsonl follows the Hugging Face imagefolder convention. Plus the pure parts:
// the page's JSON cannot end its script element, and a request view never shows base64.

import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { PlannedTask } from "../../src/manifest/PlannedTask.js";
import type { LockFile } from "../../src/state/LockFile.js";
import { writeReports } from "../../src/report/writeReports.js";
import { requestView } from "../../src/report/provenance.js";
import { scriptSafeJson } from "../../src/report/reportHtml.js";
import { taskLabels, valueLabel } from "../../src/report/reportData.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { copyManifests } from "../checkoutFiles.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = join(root, "dist", "cli", "bin.js");
const temps: string[] = [];
test.after(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const sha = (file: string): string => createHash("sha256").update(readFileSync(file)).digest("hex");

test("the demo's results.jsonl, task.json and metadata.jsonl say what made every file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-prov-"));
  temps.push(dir);
  copyManifests(dir);
  const run = await execa("node", [bin, "run", "manifests/demo.yaml", "--emulate", "--yes"], { cwd: dir, reject: false, all: true, timeout: 120_000 });
  assert.is(run.exitCode, 0, run.all);
  const rep = await execa("node", [bin, "report", "manifests/demo.yaml", "--emulate"], { cwd: dir, reject: false, all: true, timeout: 60_000 });
  assert.is(rep.exitCode, 0, rep.all);
  const out = join(dir, "outputs", "demo-emulated");
  const text = readFileSync(join(out, "results.jsonl"), "utf8");
  const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.is(lines.length, 10);
  // Never a base64 body: the demo's reference photos are sent as base64.
  const mugBase64 = readFileSync(join(dir, "manifests", "assets", "mug.png")).toString("base64");
  assert.not.ok(text.includes(mugBase64.slice(0, 200)));
  assert.not.ok(/[A-Za-z0-9+/]{400,}/.test(text), "no long base64 run in results.jsonl");
  assert.not.ok(text.includes("upstream.invalid"), "no stand-in URL");

  const keyframes = lines.filter((l) => l.job === "keyframes");
  const clips = lines.filter((l) => l.job === "clips");
  assert.is(keyframes.length, 5);
  assert.is(clips.length, 5);
  for (const k of keyframes) {
    assert.match(k.source, /^manifests\/demo\.yaml:\d+:\d+$/);
    assert.is(k.request.prompt, `Acme ${k.vars.product.name} on a plain table, ${k.vars.style} light, same object as <<<image_1>>>`);
    assert.equal(k.request.settings, { resolution: "1k", result_type: "single", n: 1, aspect_ratio: "1:1" });
    assert.is(k.request.options.external_task_id, k.id);
    const input = k.request.inputs[0];
    assert.is(input.path, k.vars.product.photo);
    assert.is(input.sha256, sha(join(dir, "manifests", input.path)));
    assert.is(input.field, "image_list[0].image");
    assert.is(input.name, "ref");
    assert.match(input.source, /^manifests\/demo\.yaml:\d+:\d+$/);
    assert.equal(k.estimate, { currency: "USD", amount: "0.02" });
    // The still knows its clip.
    assert.is(k.downstream.length, 1);
    const clip = clips.find((c) => c.id === k.downstream[0].task)!;
    assert.is(k.downstream[0].path, clip.outputs[0].path);
    assert.is(k.downstream[0].sha256, sha(join(out, clip.outputs[0].path)));
  }
  for (const c of clips) {
    assert.is(c.request.prompt, `@start turns slowly on the table, ${c.vars.item.vars.style} mood, soft camera move`);
    assert.equal(c.request.settings, { resolution: "720p", aspect_ratio: "1:1", duration: 5, audio: "off" });
    const still = keyframes.find((k) => k.id === c.upstream.task)!;
    assert.equal(c.upstream_files, [{ task: still.id, job: "keyframes", output: 0, path: still.outputs[0].path, sha256: still.outputs[0].sha256 }]);
    const input = c.request.inputs[0];
    assert.equal(
      { role: input.role, name: input.name, path: input.path, sha256: input.sha256, upstream: input.upstream },
      { role: "first_frame", name: "start", path: still.outputs[0].path, sha256: sha(join(out, still.outputs[0].path)), upstream: { task: still.id, output: 0 } },
    );
    assert.is(input.url, undefined);
  }
  // task.json beside the files: the same record.
  for (const l of lines) {
    const sidecar = JSON.parse(readFileSync(join(out, l.dir, "task.json"), "utf8"));
    assert.equal(sidecar, l);
  }
  // metadata.jsonl: Hugging Face imagefolder / videofolder.
  for (const job of ["keyframes", "clips"]) {
    const meta = readFileSync(join(out, job, "metadata.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.is(meta.length, 5);
    for (const m of meta) {
      assert.ok(existsSync(join(out, job, m.file_name)), m.file_name);
      assert.is(Object.keys(m)[0], "file_name");
      const line = lines.find((l) => l.id === m.external_task_id)!;
      assert.is(m.prompt, line.request.prompt);
      if (job === "keyframes") assert.equal([m.product, m.style], [line.vars.product, line.vars.style]);
      else assert.equal(m.item, line.vars.item);
    }
    const media = readdirSync(join(out, job), { recursive: true }).map(String).filter((f) => /\.(png|mp4)$/.test(f));
    assert.equal(meta.map((m) => m.file_name).sort(), media.map((f) => f.split("\\").join("/")).sort());
  }
  // The report is there, and names the run as emulated.
  assert.match(readFileSync(join(out, "report.html"), "utf8"), '"emulated":true');
  // What the engine's call will do: pass the loaded manifest; downstream tasks are expanded
  // again from the lockfile's upstream files, so the records are the command's, byte for byte.
  const manifest = await loadManifest("manifests/demo.yaml", { cwd: dir });
  const lock = (await readLockFile(join(dir, "manifests", "demo.emulate.lock.json")))!;
  await writeReports({ lock, outputsDir: out, manifestName: "demo", manifest, force: true, emulated: true });
  assert.is(readFileSync(join(out, "results.jsonl"), "utf8"), text);
  // Without the manifest, what made each task is kept from the last results.jsonl: a task
  // that leaves the manifest still says which request made its files.
  await writeReports({ lock, outputsDir: out, manifestName: "demo", force: true, emulated: true });
  assert.is(readFileSync(join(out, "results.jsonl"), "utf8"), text);
  // With neither (old callers, no earlier file): the same lines without request, source and estimate.
  rmSync(join(out, "results.jsonl"));
  await writeReports({ lock, outputsDir: out, manifestName: "demo", force: true, emulated: true });
  const none = readFileSync(join(out, "results.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(none, lines.map(({ request: _r, source: _s, estimate: _e, ...rest }) => rest));
});

test("scriptSafeJson: nothing in the data can close the script or open a comment, and it parses back", () => {
  const value = { a: "</script><script>alert(1)</script>", b: "<!-- x -->", c: "a & b > c", d: "\u2028\u2029" };
  const text = scriptSafeJson(value);
  assert.not.match(text, /[<>&\u2028\u2029]/);
  assert.equal(JSON.parse(text), value);
});

test("requestView: a local input by path and sha256, never base64; an unknown URL input by its URL", () => {
  const base64 = Buffer.alloc(3000, 7).toString("base64");
  const task = {
    id: "m-j-x",
    job: "j",
    kind: "image",
    vars: {},
    dir: "j/x",
    requestHash: "h",
    take: 1,
    attempt: 1,
    retryFailed: 0,
    retryContentRisk: false,
    slots: 1,
    source: { file: "m.yaml", line: 3, col: 3 },
    request: { prompt: "p <<<image_1>>> <<<image_2>>>", image_list: [{ image: base64 }, { image: "https://x.test/a.png" }], external_task_id: "m-j-x", resolution: "1k" },
    inputs: [
      { field: "image_list[0].image", role: "image", name: "a", src: "a.png", sha256: "f".repeat(64), source: { file: "m.yaml", line: 5, col: 7 } },
      { field: "image_list[1].image", role: "image", name: "b", src: "https://x.test/a.png", source: { file: "m.yaml", line: 6, col: 7 } },
    ],
  } as unknown as PlannedTask;
  const view = requestView(task);
  assert.not.ok(JSON.stringify(view).includes(base64.slice(0, 100)));
  assert.equal(view.inputs, [
    { field: "image_list[0].image", role: "image", name: "a", path: "a.png", sha256: "f".repeat(64), source: "m.yaml:5:7" },
    { field: "image_list[1].image", role: "image", name: "b", url: "https://x.test/a.png", source: "m.yaml:6:7" },
  ]);
  assert.equal(view.settings, { resolution: "1k" });
  assert.equal(view.options, { external_task_id: "m-j-x" });
});

test("labels: a data row shows its id and name; a downstream task shows its upstream's values and which output", () => {
  assert.is(valueLabel({ sku: "A-1", name: "mug", photo: "a.png" }), "A-1 mug");
  assert.is(valueLabel(3), "3");
  assert.equal(taskLabels({ item: { job: "k", task: "t", index: 1, vars: { style: "studio" } }, speed: "slow" }), { style: "studio", output: "2", speed: "slow" });
});

test.run();
