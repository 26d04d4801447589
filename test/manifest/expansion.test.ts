// Expansion through loadManifest: requests, labels, folders, data files, downstream
// jobs, the DAG and the guards, as the engine receives them.
import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ManifestInvalid, type Diagnostic } from "../../src/manifest/Diagnostic.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import type { LoadedManifest } from "../../src/manifest/LoadedManifest.js";
import type { UpstreamItem } from "../../src/manifest/PlannedTask.js";
import { tempManifest } from "./tempManifest.js";

const load = async (yaml: string, files: Record<string, string> = {}, name?: string): Promise<LoadedManifest> => {
  const m = tempManifest(yaml, files, name);
  try {
    return await loadManifest(m.file);
  } finally {
    m.cleanup();
  }
};

const problems = async (yaml: string, files: Record<string, string> = {}): Promise<Diagnostic[]> => {
  try {
    await load(yaml, files);
  } catch (error) {
    if (error instanceof ManifestInvalid) return [...error.diagnostics];
    throw error;
  }
  throw new Error("expected the manifest to be invalid");
};

const head = "version: 1\nname: t\n";

test("image labels: <<<name>>> becomes <<<image_N>>> / <<<element_N>>> by position", async () => {
  const m = await load(`${head}elements: { hero: { id: "42" } }
jobs:
  a:
    kind: image
    images: { one: https://x.test/1.png, two: assets/mug.png }
    elements: { h: hero }
    prompt: "<<<two>>> beside <<<one>>> with <<< h >>>"
`);
  const t = m.tasks[0]!;
  assert.ok(t.kind === "image");
  if (t.kind !== "image") return;
  assert.is(t.request.prompt, "<<<image_2>>> beside <<<image_1>>> with <<<element_1>>>");
  assert.equal(t.request.element_list, [{ element_id: 42 }]);
  assert.is(t.request.image_list![0]!.image, "https://x.test/1.png");
  assert.match(t.request.image_list![1]!.image, /^iVBORw0KGgo/, "local file sent as raw base64");
});

test("video: named inputs become contents with ids, spec defaults are written out", async () => {
  const m = await load(`${head}jobs:
  v:
    kind: video
    first_frame: assets/mug.png
    videos: { move: { src: "https://x.test/ref.mp4", role: feature_video } }
    prompt: "@first_frame moves like @move"
`);
  const t = m.tasks[0]!;
  assert.ok(t.kind === "video");
  if (t.kind !== "video") return;
  assert.equal(t.request.contents.map((c) => c.type), ["prompt", "first_frame", "feature_video"]);
  assert.equal(t.request.settings, { audio: "off", resolution: "720p", duration: 5 });
  assert.is(t.request.options?.external_task_id, t.id);
  assert.is(t.slots, 1);
});

test("video references: @name at a word start counts, an @ inside an address or e-mail does not", async () => {
  const m = await load(`${head}jobs:
  v:
    kind: video
    images: { hero: assets/mug.png }
    prompt: "(@hero) waves at https://example.com/@someone and mail@example.com"
`);
  assert.is(m.tasks.length, 1);
  assert.equal(m.warnings, []);
});

test("aspect_ratio defaults to 16:9 only when nothing else gives a ratio", async () => {
  const m = await load(`${head}jobs:\n  v:\n    kind: video\n    prompt: sea\n`);
  const t = m.tasks[0]!;
  assert.ok(t.kind === "video" && t.request.settings?.aspect_ratio === "16:9");
});

test("image slots are n, or series_amount for a series", async () => {
  const m = await load(`${head}jobs:
  a: { kind: image, prompt: x, n: 3 }
  b: { kind: image, prompt: y, model: kling-v3-omni, aspect_ratio: "1:1", result_type: series, series_amount: 6 }
`);
  assert.equal(m.tasks.map((t) => t.slots), [3, 6]);
  const b = m.tasks[1]!;
  assert.ok(b.kind === "image" && b.request.n === undefined && b.request.series_amount === 6);
});

test("defaults apply per kind and a job's own value wins", async () => {
  const m = await load(`${head}defaults:
  video: { duration: 10, resolution: 1080p }
jobs:
  a: { kind: video, prompt: x }
  b: { kind: video, prompt: y, settings: { duration: 4 } }
`);
  const [a, b] = m.tasks;
  assert.ok(a!.kind === "video" && a!.request.settings?.duration === 10 && a!.request.settings?.resolution === "1080p");
  assert.ok(b!.kind === "video" && b!.request.settings?.duration === 4);
});

test("numbers from a CSV become integers in numeric fields", async () => {
  const m = await load(`${head}jobs:
  a:
    kind: image
    matrix: { row: { rows: d.csv } }
    prompt: "{{ row.p }}"
    n: "{{ row.n }}"
`, { "d.csv": "p,n\nx,2\ny,3\n" });
  assert.equal(m.tasks.map((t) => (t.kind === "image" ? t.request.n : 0)), [2, 3]);
});

test("rows can come from JSON, JSONL and YAML files", async () => {
  for (const [file, text] of [
    ["d.json", '[{"p": "x"}, {"p": "y"}]'],
    ["d.jsonl", '{"p": "x"}\n\n{"p": "y"}\n'],
    ["d.yaml", "- p: x\n- p: y\n"],
  ] as const) {
    const m = await load(`${head}jobs:\n  a:\n    kind: image\n    matrix: { row: { rows: ${file} } }\n    prompt: "{{ row.p }}"\n`, { [file]: text });
    assert.equal(m.tasks.map((t) => (t.kind === "image" ? t.request.prompt : "")), ["x", "y"], file);
  }
});

test("folders come from matrix values, sanitised, unique per job and inside outputs", async () => {
  const m = await load(`${head}jobs:
  a:
    kind: image
    matrix: { v: ["../../etc", "a/b", "a_b", "con", "x\\u0001y"] }
    prompt: "{{ v }}"
`);
  const dirs = m.tasks.map((t) => t.dir);
  for (const d of dirs) {
    assert.ok(d.startsWith("a/"), d);
    assert.not.ok(d.split("/").includes(".."), d);
    assert.not.match(d, /[\u0000-\u001f\\:]/);
  }
  assert.is(new Set(dirs).size, dirs.length, "unique");
});

test("the output template names the folder, sanitised below the job", async () => {
  const m = await load(`${head}jobs:
  a:
    kind: image
    matrix: { v: [one] }
    output: "../{{ v }}/final"
    prompt: "{{ v }}"
`);
  assert.is(m.tasks[0]!.dir, "a/one/final");
});

test("two tasks sending the same request are reported with both positions", async () => {
  const d = await problems(`${head}jobs:
  a:
    kind: image
    matrix: { style: [red, blue] }
    prompt: "a mug"
`);
  assert.is(d.length, 1);
  assert.is(d[0]!.line, 6);
  assert.is(d[0]!.col, 28);
  assert.match(d[0]!.message, "m.yaml:6:23");
  assert.match(d[0]!.message, "same paid work");
});

test("a for_each cycle and a missing upstream job are errors at for_each", async () => {
  const d = await problems(`${head}jobs:
  a: { kind: image, prompt: x, for_each: b.outputs }
  b: { kind: image, prompt: y, for_each: a.outputs }
  c: { kind: image, prompt: z, for_each: nope.tasks }
`);
  assert.ok(d.some((x) => x.message.includes("cycle") && x.message.includes("->")));
  assert.ok(d.some((x) => x.line === 6 && x.message.includes("'nope', which does not exist")));
});

test("jobs come in DAG order, upstream first", async () => {
  const m = await load(`${head}jobs:
  c: { kind: video, prompt: z, for_each: b.tasks }
  b: { kind: video, prompt: y, for_each: a.outputs }
  a: { kind: image, prompt: x, n: 2 }
`);
  assert.equal(m.jobs.map((j) => j.id), ["a", "b", "c"]);
  assert.equal(m.jobs[1]!.upstream, { job: "a", mode: "outputs" });
  assert.is(m.expectedDownstreamCount("b"), 2);
  assert.is(m.expectedDownstreamCount("b", { [m.tasks[0]!.id]: 1 }), 1);
  assert.is(m.expectedDownstreamCount("c"), 2);
});

test("for_each tasks: one task per upstream task, all its outputs in item.outputs", async () => {
  const m = await load(`${head}jobs:
  a: { kind: image, prompt: x, n: 2 }
  b:
    kind: video
    for_each: a.tasks
    first_frame: "{{ item.outputs.0.url }}"
    last_frame: "{{ item.outputs.1.url }}"
    prompt: "from one to the other"
`);
  const up = m.tasks[0]!;
  const items: UpstreamItem[] = [1, 0].map((index) => ({
    job: "a", task: up.id, index, type: "image", url: `https://r.test/${index}.png?sig=${index}`, file: `/x/${index}.png`, sha256: String(index).repeat(64), vars: {},
  }));
  const made = m.expandDownstream("b", items);
  assert.is(made.length, 1);
  const t = made[0]!;
  assert.ok(t.kind === "video");
  if (t.kind !== "video") return;
  assert.equal(t.request.contents.slice(1).map((c) => ("url" in c ? c.url : "")), ["https://r.test/0.png?sig=0", "https://r.test/1.png?sig=1"]);
  assert.equal(t.upstream, { job: "a", task: up.id, output: -1 });
});

test("a rule a downstream job breaks for any item is found at load time, with an example item", async () => {
  const d = await problems(`${head}jobs:
  a: { kind: image, prompt: x }
  b:
    kind: video
    for_each: a.outputs
    first_frame: "{{ item.url }}"
    prompt: "p"
    settings: { duration: 4 }
`);
  assert.is(d.length, 1);
  assert.is(d[0]!.line, 10);
  assert.match(d[0]!.message, "5 or 10");
  assert.match(d[0]!.message, "found with an example item of 'a'");
});

test("a rule broken by one expanded downstream item throws ManifestInvalid at the manifest value", async () => {
  const m = tempManifest(`${head}jobs:
  a: { kind: image, prompt: x }
  b:
    kind: video
    for_each: a.outputs
    first_frame: "{{ item.file }}"
    prompt: "p"
`, { "tiny.png": readFileSync(new URL("../fixtures/manifests/assets/tiny.png", import.meta.url)) });
  try {
    const loaded = await loadManifest(m.file);
    // The file holds the recorded result (its sha256): it is what is sent, so its rules apply.
    const sha256 = createHash("sha256").update(readFileSync(join(m.dir, "tiny.png"))).digest("hex");
    loaded.expandDownstream("b", [{ job: "a", task: loaded.tasks[0]!.id, index: 0, type: "image", url: "https://r.test/a.png", file: join(m.dir, "tiny.png"), sha256, vars: {} }]);
    assert.unreachable("should throw");
  } catch (error) {
    assert.instance(error, ManifestInvalid);
    const d = (error as ManifestInvalid).diagnostics[0]!;
    assert.is(d.line, 8);
    assert.match(d.message, "at least 300 px");
  } finally {
    m.cleanup();
  }
});

test("a local video path is an error saying the service takes no uploaded video", async () => {
  const d = await problems(`${head}jobs:\n  a:\n    kind: video\n    videos: { ref: clips/ref.mp4 }\n    prompt: "like @ref"\n`);
  assert.is(d[0]!.line, 6);
  assert.match(d[0]!.message, "takes no uploaded video");
});

test("max_tasks stops a runaway matrix before it is built", async () => {
  const d = await problems(`${head}max_tasks: 10\njobs:\n  a:\n    kind: image\n    matrix: { x: [1,2,3,4], y: [1,2,3] }\n    prompt: "{{ x }} {{ y }}"\n`);
  assert.match(d[0]!.message, "max_tasks (10)");
});

test("paths in results: lockfile beside the manifest, outputs relative to it", async () => {
  const m = await load(`${head}outputs: out/here\njobs:\n  a: { kind: image, prompt: x }\n`, {}, "demo.yaml");
  assert.match(m.lockfilePath, /demo\.lock\.json$/);
  assert.ok(m.outputsDir.endsWith("out/here"));
  assert.is(m.concurrency, 5);
});

test("an input the prompt never names is a warning, not an error", async () => {
  const m = await load(`${head}jobs:\n  a:\n    kind: image\n    images: { ref: assets/mug.png }\n    prompt: "a mug"\n`);
  assert.is(m.tasks.length, 1);
  assert.is(m.warnings.length, 1);
  assert.match(m.warnings[0]!.message, "never refers to 'ref'");
});

test("estimates come from prices: per second of video, per image", async () => {
  const m = await load(`${head}prices: { currency: USD, video: { "1080p": 0.5 }, image: { "2k": 0.03 } }
jobs:
  v: { kind: video, prompt: x, settings: { resolution: 1080p, duration: 8 } }
  i: { kind: image, prompt: y, resolution: 2k, n: 3 }
`);
  assert.equal(m.tasks.map((t) => t.estimate), [{ currency: "USD", amount: "4" }, { currency: "USD", amount: "0.09" }]);
});


test("a mistake in an upstream job is reported once: downstream templates are checked against its matrix", async () => {
  const d = await problems(`${head}jobs:
  stills:
    kind: image
    matrix: { style: [studio, street] }
    images: { ref: assets/mug.png }
    prompt: "a cup, {{ style }} light, like <<<reff>>>"
  clips:
    kind: video
    for_each: stills.outputs
    first_frame: "{{ item.url }}"
    prompt: "turns, {{ item.vars.style }} mood"
    settings: { duration: 5 }
`);
  assert.equal(
    d.map((x) => x.line),
    [8],
    `expected only the upstream typo (line 8); got:\n${d.map((x) => `${x.line}: ${x.message}`).join("\n")}`,
  );
  assert.match(d[0]!.message, "<<<reff>>>");
});

test("a real mistake in a downstream template is still found when the upstream job is broken", async () => {
  const d = await problems(`${head}jobs:
  stills:
    kind: image
    matrix: { style: [studio, street] }
    images: { ref: assets/mug.png }
    prompt: "a cup, {{ style }} light, like <<<reff>>>"
  clips:
    kind: video
    for_each: stills.outputs
    first_frame: "{{ item.url }}"
    prompt: "turns, {{ item.vars.colour }} mood"
    settings: { duration: 5 }
`);
  assert.equal(d.map((x) => x.line).sort(), [13, 8]);
  assert.match(d.find((x) => x.line === 13)!.message, "'item.vars' has no field 'colour'");
});

test("every mistake in one string is reported, each at its column, downstream too", async () => {
  const d = await problems(`${head}jobs:
  stills:
    kind: image
    matrix: { product: [{ sku: A-1 }], style: [studio] }
    prompt: "a cup {{ product.skew }} and {{ product.nme }}, {{ style }}"
  clips:
    kind: video
    for_each: stills.outputs
    first_frame: "{{ item.url }}"
    prompt: "{{ mov }} turns, {{ item.vars.stle }} mood, {{ item.vars.product.sku }} {{ item.urll }}"
    settings: { duration: 5 }
`);
  const at = d.map((x) => `${x.line}:${x.col}`).sort();
  assert.equal(at, ["12:14", "12:31", "12:86", "7:20", "7:43"].sort(), d.map((x) => `${x.line}:${x.col} ${x.message}`).join("\n"));
});

test("per-model limits are caught at validate: kling-image-o1 with 4k or series, kling-v3-omni without references and an auto ratio", async () => {
  const found = await problems(`${head}jobs:
  a: { kind: image, prompt: x, resolution: 4k }
  b: { kind: image, prompt: y, result_type: series }
  c: { kind: image, prompt: z, model: kling-v3-omni }
  d: { kind: image, prompt: w, model: kling-v3-omni, resolution: 4k, result_type: series, aspect_ratio: "16:9" }
`);
  const lines = found.map((d) => `${d.line}: ${d.message}`);
  assert.is(lines.length, 3, lines.join("\n"));
  assert.match(lines[0]!, /^4: resolution: kling-image-o1 does not take resolution 4k/);
  assert.match(lines[1]!, /^5: result_type: kling-image-o1 does not take result_type series/);
  assert.match(lines[2]!, /^6: .*kling-v3-omni without reference images does not take aspect_ratio auto/);
});

test("a model named for another service is refused at its line with the service's own name as the suggestion", async () => {
  const found = await problems(`${head}jobs:
  a: { kind: image, prompt: x, model: svc-image-o1 }
  b:
    kind: video
    prompt: y
    model: svc-o1
  c: { kind: video, prompt: z, model: "bad/name" }
`);
  const lines = found.map((d) => `${d.line}:${d.col}: ${d.message}`);
  assert.is(lines.length, 3, lines.join("\n"));
  assert.match(lines[0]!, /^4:\d+: model: must be one of kling-image-o1, kling-v3-omni \(got "svc-image-o1"\): did you mean kling-image-o1\?.*--service or OMNIBATCH_SERVICE/);
  assert.match(lines[1]!, /^8:\d+: model: the service 'kling' has no model 'svc-o1': did you mean kling-o1\?/);
  assert.match(lines[2]!, /^9:\d+: model: must be a model name/);
});

test("a video model this release does not know is sent as named, its input rules the spec's", async () => {
  const m = await load(`${head}jobs:
  a: { kind: video, prompt: x, model: kling-v9-omni }
`);
  assert.is((m.tasks[0] as { model?: string }).model, "kling-v9-omni");
  const found = await problems(`${head}jobs:
  a: { kind: video, prompt: x, model: kling-v9-omni, settings: { duration: 11 } }
`);
  assert.is(found.length, 1, found.map((d) => d.message).join("\n"));
});

test("task folders must be unique as paths: one folder inside another is refused at validate, naming both positions", async () => {
  const found = await problems(`${head}jobs:
  pics:
    kind: image
    prompt: "{{ v }}"
    output: "{{ v }}"
    matrix:
      v:
        - x
        - x/image-1.png
        - y/z
        - y
`);
  const lines = found.map((d) => `${d.line}:${d.col} ${d.message}`);
  assert.is(lines.length, 2, lines.join("\n"));
  assert.match(lines[0]!, /^11:\d+ .*its folder 'pics\/x\/image-1.png' lies inside the folder 'pics\/x'.* at .*m\.yaml:10:\d+/);
  assert.match(lines[1]!, /^13:\d+ .*its folder 'pics\/y' holds the folder 'pics\/y\/z'.* at .*m\.yaml:12:\d+/);
});

test("task folders differing only in letter case are refused (one folder on macOS and Windows); equal names still get a suffix", async () => {
  const found = await problems(`${head}jobs:
  pics:
    kind: image
    prompt: "{{ v }}"
    matrix:
      v: [Alpha, alpha]
`);
  assert.is(found.length, 1);
  assert.match(found[0]!.message, "differs only in letter case from 'pics/Alpha'");
  const m = await load(`${head}jobs:
  pics:
    kind: image
    prompt: "{{ v }} {{ w }}"
    output: "{{ v }}"
    matrix:
      v: [a]
      w: [one, two]
`);
  assert.equal(m.tasks.map((t) => t.dir.replace(/-[a-z2-7]{6}$/, "-<id>")), ["pics/a", "pics/a-<id>"]);
});

test.run();
