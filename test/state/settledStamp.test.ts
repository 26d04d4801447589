// The settled stamp's pure decisions (src/state/SettledStamp.ts): a stamp is read only with
// its shape and its own key; it matches only when every part observed is the same; a run
// may take the fast path only when plain; a run's end is stamped only when it did nothing
// and left nothing to do.

import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  ABSENT,
  endsSettled,
  fastPathRefusal,
  makeStamp,
  readStamp,
  safeRelPath,
  stampMismatch,
  toolOf,
  SETTLED_PLAN_VERSION,
  type Observed,
  type RunAsked,
  type RunEnd,
  type SettledStamp,
} from "../../src/state/SettledStamp.js";

const h = (c: string) => c.repeat(64);

const stamp: SettledStamp = makeStamp({
  format: 1,
  tool: toolOf("1.2.3"),
  manifest: ["/w/m.yaml", h("a")],
  inputs: [
    ["/w/data/p.csv", h("b")],
    ["/w/assets/gone.png", ABSENT],
  ],
  options: { outputs: "/w/out", service: "http://127.0.0.1:1", timeScale: "" },
  lines: h("c"),
  day: 20_000,
  reports: h("d"),
  replay: { events: [{ type: "start", at: "" }], summary: { outcome: "done", exitCode: 0, created: 0, downloaded: 0, elapsedMs: 0 } },
});

const observed: Observed = {
  tool: toolOf("1.2.3"),
  manifest: ["/w/m.yaml", h("a")],
  inputs: new Map([
    ["/w/data/p.csv", h("b")],
    ["/w/assets/gone.png", ABSENT],
  ]),
  options: { outputs: "/w/out", service: "http://127.0.0.1:1", timeScale: "" },
  lines: h("c"),
  day: 20_000,
  reports: h("d"),
  reportFilesPresent: true,
  journal: false,
  service: "http://127.0.0.1:1",
};

test("the tool names the planning constant", () => {
  assert.is(toolOf("1.2.3"), `1.2.3+plan${SETTLED_PLAN_VERSION}`);
});

test("a stamp is read back only with its shape and its own key", () => {
  const round = JSON.parse(JSON.stringify(stamp)) as unknown;
  assert.equal(readStamp(round), stamp);
  for (const edit of [
    { day: 19_999 },
    { lines: h("e") },
    { tool: "9.9.9+plan1" },
    { inputs: [] },
    { replay: { events: [], summary: { exitCode: 1 } } },
    { options: { ...stamp.options, outputs: "/elsewhere" } },
  ]) {
    assert.is(readStamp({ ...stamp, ...edit }), undefined, JSON.stringify(edit));
  }
  assert.is(readStamp({ ...stamp, key: "x" }), undefined);
  assert.is(readStamp(undefined), undefined);
  assert.is(readStamp("settled"), undefined);
  assert.is(readStamp({ ...stamp, format: 2 }), undefined);
  assert.is(readStamp({ ...stamp, inputs: [["/a", 1]] }), undefined);
});

test("a replay no settled run could have told is no stamp, even with its key made again (a forged stamp)", () => {
  const { key: _key, ...body } = stamp;
  const told = body.replay.summary;
  for (const summary of [
    { ...told, exitCode: 7 },
    { ...told, exitCode: 1 },
    { ...told, outcome: "stopped" },
    { ...told, created: 3 },
    { ...told, downloaded: 1 },
  ]) {
    assert.is(readStamp(makeStamp({ ...body, replay: { ...body.replay, summary } })), undefined, JSON.stringify(summary));
  }
  assert.is(readStamp(makeStamp({ ...body, replay: { ...body.replay, events: [{ type: "notice", message: "all verified" }] } })), undefined);
  assert.ok(readStamp(makeStamp(body)), "the same body made again is a stamp");
});

test("the stamp matches only when every part observed is the same", () => {
  assert.is(stampMismatch(stamp, observed), undefined);
  const cases: [Partial<Observed>, RegExp][] = [
    [{ journal: true }, /journal/],
    [{ tool: toolOf("1.2.4") }, /made by/],
    [{ tool: "1.2.3+plan0" }, /made by/],
    [{ manifest: ["/w/m.yaml", h("f")] }, /manifest changed/],
    [{ manifest: ["/elsewhere/m.yaml", h("a")] }, /manifest changed/],
    [{ inputs: new Map([["/w/data/p.csv", h("0")], ["/w/assets/gone.png", ABSENT]]) }, /p\.csv changed/],
    [{ inputs: new Map([["/w/data/p.csv", h("b")], ["/w/assets/gone.png", h("1")]]) }, /gone\.png changed/],
    [{ inputs: new Map([["/w/assets/gone.png", ABSENT]]) }, /p\.csv changed/],
    [{ options: { ...observed.options, timeScale: "0.5" } }, /options/],
    [{ options: { ...observed.options, concurrency: "4" } }, /options/],
    [{ options: { outputs: "/w/out", service: "https://api.example", timeScale: "" } }, /options/],
    [{ service: "https://other.example" }, /service/],
    [{ service: undefined }, /service/],
    [{ lines: h("9") }, /task lines/],
    [{ day: 20_001 }, /day/],
    [{ reports: h("8") }, /reports/],
    [{ reports: undefined }, /reports/],
    [{ reportFilesPresent: false }, /reports/],
  ];
  for (const [change, why] of cases) assert.match(stampMismatch(stamp, { ...observed, ...change }) ?? "", why, JSON.stringify(change));
});

const plain: RunAsked = { emulate: false, selection: false, plan: false, recreateLost: false, switchService: false, callbackFlags: false, ci: false };

test("only a plain run may take the fast path", () => {
  assert.is(fastPathRefusal(plain), undefined);
  for (const k of Object.keys(plain) as (keyof RunAsked)[]) assert.type(fastPathRefusal({ ...plain, [k]: true }), "string", k);
});

const idle: RunEnd = {
  outcome: "done",
  exitCode: 0,
  created: 0,
  adopted: 0,
  downloaded: 0,
  failures: 0,
  unchanged: true,
  allDownloaded: true,
  reviewWaiting: false,
  lost: false,
  reportsWritten: true,
  otherEvents: 0,
};

test("a run's end is stamped only when it did nothing and left nothing to do", () => {
  assert.ok(endsSettled(idle));
  const not: Partial<RunEnd>[] = [
    { outcome: "pending" },
    { outcome: "review" },
    { exitCode: 1 },
    { created: 1 },
    { adopted: 1 },
    { downloaded: 1 },
    { failures: 1 },
    { unchanged: false },
    { allDownloaded: false },
    { reviewWaiting: true },
    { lost: true },
    { reportsWritten: false },
    { otherEvents: 1 },
  ];
  for (const change of not) assert.not.ok(endsSettled({ ...idle, ...change }), JSON.stringify(change));
});

test("result paths from a task line: plain relative paths only", () => {
  for (const ok of ["a/b.png", "stills/apple-warm/image-1.png", "x"]) assert.ok(safeRelPath(ok), ok);
  for (const bad of ["", "/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a\\b", "a\0b"]) assert.not.ok(safeRelPath(bad), bad);
});

test.run();
