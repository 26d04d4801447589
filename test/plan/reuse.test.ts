// The reuse rule (src/plan/reuse.ts): which paid result stands for a planned task, and why not.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { costOf, indexLockfiles, paidResult, reuseFor, type FilesVerdict, type ReuseCandidate, type ReuseLockfile } from "../../src/plan/reuse.js";
import { requestHash } from "../../src/manifest/TaskIdentity.js";
import type { LockTask } from "../../src/state/LockFile.js";

const INTENT = "a".repeat(64);
const hashOf = (intent: string, take = 1) => (attempt: number) => requestHash(intent, take, attempt);

const paid = (overrides: Partial<LockTask> = {}): LockTask => ({
  job: "stills",
  kind: "image",
  vars: { sku: "A-1", style: "studio" },
  dir: "stills/A-1_studio",
  request_hash: requestHash(INTENT, 1, 1),
  take: 1,
  attempt: 1,
  state: "downloaded",
  finished_at: Date.UTC(2026, 10, 20),
  updated_at: Date.UTC(2026, 10, 20),
  outputs: [{ type: "image", index: 0, variant: "main", path: "stills/A-1_studio/image-1.png", size: 3, sha256: "b".repeat(64) }],
  billing: [{ charge_type: "cash", amount: "0.02", currency: "USD" }],
  ...overrides,
});

const lockfile = (label: string, tasks: Record<string, LockTask>, own = false): ReuseLockfile => ({
  label,
  manifest: label.replace(/\.lock\.json$/, ".yaml"),
  own,
  sameService: true,
  tasks,
});

const allThere = (): FilesVerdict => ({ ok: true, files: new Map() });

test("a downloaded, paid task with the same request is reused, with where it comes from and when it was paid", () => {
  const index = indexLockfiles([lockfile("spring.lock.json", { "spring-stills-x": paid() })]);
  const d = reuseFor(hashOf(INTENT), index, allThere);
  assert.ok(d && "reuse" in d);
  assert.is(d.reuse.id, "spring-stills-x");
  assert.is(d.reuse.lockfile, "spring.lock.json");
  assert.is(d.reuse.note, "reused: same request as spring.yaml stills sku=A-1 style=studio, paid 2026-11-20");
  assert.equal(d.reuse.cost, { amount: "0.02", currency: "USD" });
});

test("another take, another intent: no match at all", () => {
  const index = indexLockfiles([lockfile("spring.lock.json", { x: paid() })]);
  assert.is(reuseFor(hashOf(INTENT, 2), index, allThere), undefined);
  assert.is(reuseFor(hashOf("c".repeat(64)), index, allThere), undefined);
});

test("a later attempt of the same request matches (the attempt does not count)", () => {
  const index = indexLockfiles([lockfile("spring.lock.json", { x2: paid({ attempt: 3, request_hash: requestHash(INTENT, 1, 3) }) })]);
  const d = reuseFor(hashOf(INTENT), index, allThere);
  assert.ok(d && "reuse" in d && d.reuse.id === "x2");
});

test("unfinished, failed, replaced, pruned, abandoned or fileless records are never sources", () => {
  const bad: LockTask[] = [
    paid({ state: "processing" }),
    paid({ state: "failed" }),
    paid({ superseded_by: "other" }),
    paid({ pruned_at: 1 }),
    paid({ abandoned: { service: "emulator", at: 1 } }),
    paid({ outputs: [] }),
    paid({ state: "succeeded", outputs: [{ type: "image", index: 0, variant: "main" }] }),
  ];
  for (const t of bad) assert.not.ok(paidResult(t), JSON.stringify(t));
  const index = indexLockfiles([lockfile("a.lock.json", Object.fromEntries(bad.map((t, i) => [`t${i}`, t])))]);
  assert.is(reuseFor(hashOf(INTENT), index, allThere), undefined);
});

test("files gone or with other bytes: not reused, and the plan says why", () => {
  const index = indexLockfiles([lockfile("spring.lock.json", { x: paid() })]);
  const gone = reuseFor(hashOf(INTENT), index, () => ({ ok: false, why: "files gone" }));
  assert.ok(gone && "why" in gone);
  assert.match(gone.why, "not reused (files gone)");
  const other = reuseFor(hashOf(INTENT), index, () => ({ ok: false, why: "other bytes" }));
  assert.ok(other && "why" in other);
  assert.match(other.why, "not reused (other bytes)");
});

test("files gone: fetched from the service by task id only for this service's task while it holds the results; past that, the plan says why", () => {
  const gone = (): FilesVerdict => ({ ok: false, why: "files gone" });
  const withId = paid({ task_id: "svc-1", created_at: Date.UTC(2026, 10, 20) });
  const held = reuseFor(hashOf(INTENT), indexLockfiles([lockfile("spring.lock.json", { x: withId })]), gone, false, () => true);
  assert.ok(held && "reuse" in held);
  assert.is(held.reuse.fetch, true);
  assert.is(held.reuse.files.size, 0);
  assert.match(held.reuse.note, "fetched again from the service by its task id");
  const past = reuseFor(hashOf(INTENT), indexLockfiles([lockfile("spring.lock.json", { x: withId })]), gone, false, () => false);
  assert.ok(past && "why" in past);
  assert.match(past.why, "not reused (files gone, past the service's 30 days)");
  // Another region's lockfile: its files only, never its task id.
  const other = reuseFor(hashOf(INTENT), indexLockfiles([{ ...lockfile("spring.lock.json", { x: withId }), sameService: false }]), gone, false, () => true);
  assert.ok(other && "why" in other);
  assert.match(other.why, "not reused (files gone)");
  assert.not.match(other.why, "30 days");
  // No task id recorded, or no service known (plan without one): nothing to fetch.
  const noId = reuseFor(hashOf(INTENT), indexLockfiles([lockfile("spring.lock.json", { x: paid() })]), gone, false, () => true);
  assert.ok(noId && "why" in noId);
  const unknown = reuseFor(hashOf(INTENT), indexLockfiles([lockfile("spring.lock.json", { x: withId })]), gone);
  assert.ok(unknown && "why" in unknown);
  // Files there beat a fetch; off beats both.
  const there = reuseFor(hashOf(INTENT), indexLockfiles([lockfile("spring.lock.json", { x: withId })]), () => ({ ok: true, files: new Map([["a", "b"]]), store: "s3://b/p" }), false, () => true);
  assert.ok(there && "reuse" in there);
  assert.is(there.reuse.fetch, undefined);
  assert.is(there.reuse.store, "s3://b/p");
  const off = reuseFor(hashOf(INTENT), indexLockfiles([lockfile("spring.lock.json", { x: withId })]), gone, true, () => true);
  assert.ok(off && "why" in off);
});

test("a charge that names no currency (image charges): no cost said, never an empty currency", () => {
  const d = reuseFor(hashOf(INTENT), indexLockfiles([lockfile("a.lock.json", { a: paid({ billing: [{ charge_type: "cash", amount: "0.02" }] }) })]), allThere);
  assert.ok(d && "reuse" in d);
  assert.is(d.reuse.cost, undefined);
});

test("off: never reused, and said", () => {
  const index = indexLockfiles([lockfile("spring.lock.json", { x: paid() })]);
  const d = reuseFor(hashOf(INTENT), index, allThere, true);
  assert.ok(d && "why" in d);
  assert.match(d.why, "reuse is off");
});

test("a candidate whose files fail is passed over for the next one", () => {
  const index = indexLockfiles([lockfile("a.lock.json", { old: paid({ finished_at: 1 }) }), lockfile("b.lock.json", { new: paid({ finished_at: 2 }) })]);
  const d = reuseFor(hashOf(INTENT), index, (c) => (c.id === "new" ? { ok: false, why: "other bytes" } : allThere()));
  assert.ok(d && "reuse" in d && d.reuse.id === "old");
});

test("a reused record as a source: its original payment time and cost, not its own empty billing", () => {
  const t = paid({ billing: [], finished_at: 99, reused_from: { lockfile: "x.lock.json", id: "x", paid_at: Date.UTC(2026, 0, 2), cost: { amount: "0.5", currency: "CNY" } } });
  const d = reuseFor(hashOf(INTENT), indexLockfiles([lockfile("a.lock.json", { a: t })]), allThere);
  assert.ok(d && "reuse" in d);
  assert.equal(d.reuse.cost, { amount: "0.5", currency: "CNY" });
  assert.is(d.reuse.paidAt, Date.UTC(2026, 0, 2));
});

// Property: over random sets of lockfiles, the chosen source is an eligible record with the
// task's request, files verified; own lockfile first, then the newest paid; the same answer
// whatever order the lockfiles come in.
const seeded = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};

test("property: chosen source is eligible, has the request, files ok, own first then newest; order of lockfiles does not matter", () => {
  const intents = ["a", "b", "c"].map((c) => c.repeat(64));
  for (let round = 0; round < 300; round++) {
    const r = seeded(round + 1);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const files: ReuseLockfile[] = [];
    const nFiles = 1 + Math.floor(r() * 4);
    for (let f = 0; f < nFiles; f++) {
      const tasks: Record<string, LockTask> = {};
      for (let i = 0; i < 1 + Math.floor(r() * 5); i++) {
        const intent = pick(intents);
        const take = pick([1, 1, 2]);
        const attempt = pick([1, 1, 2, 3]);
        tasks[`f${f}-t${i}`] = paid({
          request_hash: requestHash(intent, take, attempt),
          take,
          attempt,
          state: pick(["downloaded", "downloaded", "failed", "processing"] as const),
          finished_at: Math.floor(r() * 10),
          ...(r() < 0.15 ? { superseded_by: "z" } : {}),
        });
      }
      files.push(lockfile(`l${f}.lock.json`, tasks, f === 0 && r() < 0.5));
    }
    const broken = new Set<string>();
    for (const l of files) for (const id in l.tasks) if (r() < 0.25) broken.add(id);
    const check = (c: ReuseCandidate): FilesVerdict => (broken.has(c.id) ? { ok: false, why: "files gone" } : allThere());
    const intent = pick(intents);
    const take = pick([1, 2]);
    const off = r() < 0.1;
    const d = reuseFor(hashOf(intent, take), indexLockfiles(files), check, off);
    const shuffled = [...files].reverse();
    assert.equal(JSON.stringify(reuseFor(hashOf(intent, take), indexLockfiles(shuffled), check, off)), JSON.stringify(d), "same answer in any order");
    const usable = files.flatMap((l) =>
      Object.entries(l.tasks)
        .filter(([id, t]) => paidResult(t) && t.request_hash === requestHash(intent, take, t.attempt) && !broken.has(id))
        .map(([id, t]) => ({ l, id, t })),
    );
    if (off || usable.length === 0) {
      assert.ok(d === undefined || "why" in d, "nothing usable: not reused");
      continue;
    }
    assert.ok(d && "reuse" in d, "something usable: reused");
    const chosen = usable.find((u) => u.id === d.reuse.id)!;
    assert.ok(chosen, "the source is one of the usable records");
    if (usable.some((u) => u.l.own)) assert.ok(chosen.l.own, "own lockfile first");
    const peers = usable.filter((u) => u.l.own === chosen.l.own);
    assert.is(chosen.t.finished_at, Math.max(...peers.map((u) => u.t.finished_at!)), "the newest paid");
  }
});

test("costOf: a charge that names no currency (an image-only account without prices) has no cost to record, never an empty currency (the lockfile's schema refuses one)", () => {
  assert.equal(costOf(paid()), { amount: "0.02", currency: "USD" });
  assert.is(costOf(paid({ billing: [{ charge_type: "cash", amount: "0.02" }] })), undefined);
  const index = indexLockfiles([lockfile("spring.lock.json", { x: paid({ billing: [{ charge_type: "cash", amount: "0.02" }] }) })]);
  const d = reuseFor(hashOf(INTENT), index, allThere);
  assert.ok(d && "reuse" in d);
  assert.is(d.reuse.cost, undefined);
});

test.run();
