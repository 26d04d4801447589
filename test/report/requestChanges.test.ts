// What a changed task (`~`) changed, field by field, from the request its old task was
// recorded with: the prompt around its first difference, settings and options by dotted
// path (never the external id), inputs by file or content; and the old request is read
// back from results.jsonl, damaged lines skipped.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { excerpts, recordedRequests, requestChanges } from "../../src/report/requestChanges.js";
import type { RequestView } from "../../src/report/provenance.js";

const view = (over: Partial<RequestView> = {}): RequestView => ({
  prompt: "a white mug on a plain table, studio light",
  settings: { duration: 5, resolution: "720p", camera: { zoom: 1 } },
  options: { external_task_id: "x-1" },
  inputs: [{ field: "contents[1].url", role: "first_frame", name: "start", path: "stills/A/0.png", sha256: "a".repeat(64) }],
  ...over,
});

test("the same request: no change", () => {
  assert.equal(requestChanges(view(), view({ options: { external_task_id: "x-2" } })), []);
});

test("prompt, settings (nested too), options and inputs each say old → new", () => {
  const after = view({
    prompt: "a white mug on a glossy table, studio light",
    settings: { duration: 10, resolution: "720p", camera: { zoom: 2 }, mode: "pro" },
    options: { external_task_id: "x-2", watermark_info: { enabled: true } },
    inputs: [{ field: "contents[1].url", role: "first_frame", name: "start", path: "stills/A/0.png", sha256: "b".repeat(64) }],
  });
  assert.equal(requestChanges(view(), after), [
    'prompt: "a white mug on a plain table, studio light" → "a white mug on a glossy table, studio light"',
    "settings.camera.zoom: 1 → 2",
    "settings.duration: 5 → 10",
    'settings.mode: (none) → "pro"',
    "options.watermark_info.enabled: (none) → true",
    `contents[1].url @start: stills/A/0.png changed (sha256 ${"a".repeat(12)} → ${"b".repeat(12)})`,
  ]);
  const moved = view({ inputs: [{ field: "contents[1].url", role: "first_frame", path: "stills/B/0.png" }] });
  assert.equal(requestChanges(view(), moved), ["contents[1].url (first_frame): stills/A/0.png → stills/B/0.png"]);
});

test("a long prompt is shown around its first difference, cut with ellipses", () => {
  const a = `${"x".repeat(100)} red ${"y".repeat(100)}`;
  const b = `${"x".repeat(100)} blue ${"y".repeat(100)}`;
  const [ea, eb] = excerpts(a, b, 30);
  assert.ok(ea.startsWith("…") && ea.endsWith("…") && ea.includes("red"), ea);
  assert.ok(eb.includes("blue"), eb);
  assert.ok(ea.length <= 32);
});

test("results.jsonl: requests by id; lines without a request or damaged are skipped", () => {
  const text = [JSON.stringify({ id: "a", request: view() }), "{not json", JSON.stringify({ id: "b" }), ""].join("\n");
  const m = recordedRequests(text);
  assert.equal([...m.keys()], ["a"]);
  assert.is(m.get("a")!.prompt, view().prompt);
});

test.run();
