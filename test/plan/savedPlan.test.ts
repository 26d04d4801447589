// Saved plans (src/plan/savedPlan.ts): what `plan --out` writes, the digests that
// tie it to a manifest and a lockfile, and the field-by-field check on load.

import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PlanResult } from "../../src/plan/diffPlan.js";
import { checkSavedPlan, lockDigest, manifestDigest, savePlan, selectionOfPlan, type SavedPlan } from "../../src/plan/savedPlan.js";
import { parseWhere, type WhereClause } from "../../src/plan/selection.js";
import type { LockTask } from "../../src/state/LockFile.js";

const plan: PlanResult = {
  manifest: "m.yaml",
  lockfile: "m.lock.json",
  lockfileFound: false,
  entries: [
    { mark: "+", id: "m-stills-aaaa", job: "stills", vars: { s: "a" }, estimate: { currency: "USD", amount: "0.02" } },
    { mark: "=", id: "m-stills-bbbb", job: "stills", vars: { s: "b" }, state: "downloaded" },
    { mark: "~", id: "m-stills-cccc", job: "stills", vars: { s: "c" }, replaces: ["m-stills-old"] },
    { mark: "…", id: "clips", job: "clips", vars: {}, count: 3 },
  ],
  jobs: {},
  total: { "+": 1, "=": 1, "~": 1, "-": 0, "…": 3, inFlight: 0 },
  estimate: { USD: "0.02" },
  waitingEstimate: {},
};

const saved = (): SavedPlan =>
  savePlan({
    plan,
    name: "m",
    emulated: false,
    manifestDigest: "a".repeat(64),
    lockDigest: "b".repeat(64),
    selection: { only: ["stills"], where: [parseWhere("product.sku=A-1") as WhereClause], failed: true },
    now: new Date("2026-11-23T22:00:00Z"),
  });

test("savePlan lists exactly the tasks to create (+ and ~) with their estimates, the digests and the selection flags", () => {
  const s = saved();
  assert.equal(s.create, [
    { id: "m-stills-aaaa", job: "stills", vars: { s: "a" }, estimate: { currency: "USD", amount: "0.02" } },
    { id: "m-stills-cccc", job: "stills", vars: { s: "c" } },
  ]);
  assert.equal(s.selection, { only: ["stills"], where: ["product.sku=A-1"], failed: true });
  assert.equal(s.digests, { manifest: "a".repeat(64), lockfile: "b".repeat(64) });
  assert.is(s.created_at, "2026-11-23T22:00:00.000Z");
  assert.equal(selectionOfPlan(s), { only: ["stills"], where: [{ key: "product.sku", path: ["product", "sku"], value: "A-1" }], failed: true });
});

test("checkSavedPlan accepts what savePlan writes, after a JSON round trip", () => {
  const back = checkSavedPlan(JSON.parse(JSON.stringify(saved())));
  assert.not.ok(Array.isArray(back), JSON.stringify(back));
  assert.equal(back, JSON.parse(JSON.stringify(saved())));
});

test("checkSavedPlan names every problem with its JSON path", () => {
  const bad = JSON.parse(JSON.stringify(saved()));
  bad.version = 9;
  bad.digests.lockfile = "xyz";
  bad.selection.where = ["nokey"];
  bad.create[1].id = "Not An Id";
  bad.create.push({ ...bad.create[0] });
  bad.estimate = { USD: "lots" };
  bad.extra = 1;
  assert.equal(checkSavedPlan(bad), [
    "/version: must be 1 (made by another version of omnibatch: make the plan again)",
    "/digests/lockfile: must be a sha256 (64 hex digits)",
    "/selection/where/0: must be key=value",
    "/create/1/id: must be an external task id",
    "/create/2/id: 'm-stills-aaaa' is listed twice",
    "/estimate: must map currencies to decimal amounts",
    "/extra: is not a field of a saved plan",
  ]);
  assert.equal(checkSavedPlan([]), ["/: must be an object (a plan written by 'omnibatch plan --out')"]);
  assert.match((checkSavedPlan({ format: "terraform" }) as string[])[0]!, '/format: must be "omnibatch-plan"');
});

const task = (state: LockTask["state"], extra: Partial<LockTask> = {}): LockTask => ({
  job: "stills",
  kind: "image",
  vars: { s: "a", t: 1 },
  dir: "stills/a",
  request_hash: "h",
  take: 1,
  attempt: 1,
  state,
  updated_at: 1,
  outputs: [],
  billing: [],
  ...extra,
});

test("lockDigest: the same tasks in any key order give the same digest; any change of a task changes it; no lockfile = an empty one", () => {
  const a = { tasks: { x: task("planned"), y: task("downloaded") } };
  const reordered = { tasks: { y: { ...task("downloaded") }, x: Object.fromEntries(Object.entries(task("planned")).reverse()) as unknown as LockTask } };
  assert.is(lockDigest(a), lockDigest(reordered));
  assert.is.not(lockDigest(a), lockDigest({ tasks: { x: task("submitting"), y: task("downloaded") } }));
  assert.is.not(lockDigest(a), lockDigest({ tasks: { x: task("planned", { updated_at: 2 }), y: task("downloaded") } }));
  assert.is(lockDigest(undefined), lockDigest({ tasks: {} }));
});

test("manifestDigest covers the manifest's text and its task ids (data files and images change ids), not their order", () => {
  const d = manifestDigest("name: m", [{ id: "a" }, { id: "b" }]);
  assert.is(d, manifestDigest("name: m", [{ id: "b" }, { id: "a" }]));
  assert.is.not(d, manifestDigest("name: m ", [{ id: "a" }, { id: "b" }]));
  assert.is.not(d, manifestDigest("name: m", [{ id: "a" }, { id: "c" }]));
  assert.match(d, /^[0-9a-f]{64}$/);
});

test.run();
