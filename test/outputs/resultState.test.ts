// The result-state rule (src/outputs/resultState.ts): each recorded result is present,
// restorable (from a store or the service) or lost, from facts alone. Unit cases for each
// branch, and properties over generated facts with a seeded generator.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { earliestDeletion, etagFingerprint, isResultFile, notFoundMeansDeleted, pastRetention, resultState, SERVICE_RETENTION_MS, storedCopy, type LocalCopy, type ResultFacts } from "../../src/outputs/resultState.js";
import type { LockOutput } from "../../src/state/LockFile.js";

const t = suite("result state");
const DAY = 86_400_000;
const made = 1_790_000_000_000;
const file: LockOutput = { type: "image", index: 0, variant: "main", path: "stills/apple/image-1.png", size: 10, sha256: "b".repeat(64) };
const task = { created_at: made, finished_at: made + 60_000 };

t("a file on disk that matches its record is present, whatever the service or the store say", () => {
  assert.equal(resultState({ output: { ...file, deleted_at: made + 40 * DAY }, task, local: "matches", now: made + 90 * DAY }), { state: "present" });
});

t("missing here while the service may still have it: restorable from the service, with the earliest deletion date", () => {
  assert.equal(resultState({ output: file, task, local: "missing", now: made + DAY }), { state: "restorable", from: "service", deletesAt: made + SERVICE_RETENTION_MS });
  assert.equal(resultState({ output: file, task, local: "differs", now: made + DAY }).state, "restorable");
});

t("missing here and deleted at the service: lost, with the date the service was seen without it", () => {
  assert.equal(resultState({ output: { ...file, deleted_at: made + 31 * DAY }, task, local: "missing", now: made + 31 * DAY }), {
    state: "lost",
    why: "deleted",
    at: made + 31 * DAY,
  });
});

t("missing here and past the service's 30 days from the task's end: lost (expired), never before", () => {
  const end = task.finished_at;
  assert.is(resultState({ output: file, task, local: "missing", now: end + SERVICE_RETENTION_MS - 1 }).state, "restorable");
  assert.equal(resultState({ output: file, task, local: "missing", now: end + SERVICE_RETENTION_MS }), { state: "lost", why: "expired", at: end + SERVICE_RETENTION_MS });
});

t("a 404 on a fresh result link proves the result deleted only past the service's 30 days from the task's end; within them, or with no known end, it proves nothing", () => {
  const ended = made + 60_000;
  assert.is(notFoundMeansDeleted(ended, ended + 1_000), false, "a second after it ended");
  assert.is(notFoundMeansDeleted(ended, ended + 30 * DAY - 1), false);
  assert.is(notFoundMeansDeleted(ended, ended + 30 * DAY), true);
  assert.is(notFoundMeansDeleted(undefined, ended + 90 * DAY), false);
  assert.is(notFoundMeansDeleted(Number.NaN, ended + 90 * DAY), false);
  assert.is(pastRetention(ended, ended + SERVICE_RETENTION_MS), true);
});

t("a store holding the object with the recorded size and ETag makes a deleted result restorable; a different object does not", () => {
  const deleted = { ...file, deleted_at: made + 31 * DAY, etag: "0cc175b9" };
  const facts = (inStore: ResultFacts["inStore"]): ResultFacts => ({ output: deleted, task, local: "missing", now: made + 40 * DAY, inStore });
  assert.equal(resultState(facts((k) => (k === file.path ? { size: 10, etag: "0CC175B9C0F1B6A831C399E269772661" } : undefined))), { state: "restorable", from: "store" });
  assert.equal(resultState(facts((k) => (k === file.path ? { size: 10 } : undefined))), { state: "restorable", from: "store" }, "a listing without ETags: by size");
  assert.is(resultState(facts(() => ({ size: 11, etag: "0cc175b9c0f1b6a831c399e269772661" }))).state, "lost");
  assert.is(resultState(facts(() => ({ size: 10, etag: "92eb5ffee6ae2fec3ad71c777531578f" }))).state, "lost", "the right size, another ETag: never counted");
  assert.is(resultState(facts(() => undefined)).state, "lost");
});

t("an object in the store against its record: size and ETag fingerprint both match, else it differs; an older record without the fingerprint is compared by size", () => {
  const rec = { size: 10, etag: "0cc175b9" };
  assert.is(storedCopy(rec, undefined), "missing");
  assert.is(storedCopy(rec, { size: 10, etag: "0cc175b9c0f1b6a831c399e269772661" }), "matches");
  assert.is(storedCopy(rec, { size: 10, etag: "0cc175b9c0f1b6a831c399e269772661-3" }), "matches", "same leading characters");
  assert.is(storedCopy(rec, { size: 10, etag: "92eb5ffee6ae2fec3ad71c777531578f" }), "differs");
  assert.is(storedCopy(rec, { size: 9, etag: "0cc175b9c0f1b6a831c399e269772661" }), "differs");
  assert.is(storedCopy({ size: 10 }, { size: 10, etag: "92eb5ffee6ae2fec3ad71c777531578f" }), "matches", "older record: size only");
  assert.is(storedCopy({}, { size: 10 }), "differs", "no recorded size: nothing to match");
  assert.is(etagFingerprint("0CC175B9C0F1B6A831C399E269772661"), "0cc175b9");
  assert.is(etagFingerprint("ab"), "ab");
  assert.is(etagFingerprint("é0cc175b9"), undefined, "not printable ASCII: none recorded");
});

t("only result files count: metadata items and never-recorded outputs are not results", () => {
  assert.ok(isResultFile(file));
  assert.not.ok(isResultFile({ type: "voice", index: 0, variant: "meta", meta: { id: "v" } }));
  assert.not.ok(isResultFile({ type: "image", index: 0, variant: "main" }));
  assert.ok(isResultFile({ type: "image", index: 0, variant: "main", deleted_at: 5 }), "deleted before it was ever fetched: a lost result");
  assert.is(earliestDeletion({ created_at: 1 }), 1 + SERVICE_RETENTION_MS);
  assert.is(earliestDeletion({}), undefined);
});

// A small seeded generator (mulberry32), so a failure names a reproducible case.
const rng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
};

t("properties over 20,000 generated cases: present iff the local copy matches; lost never while a matching stored copy exists or before the service may have deleted it", () => {
  const r = rng(16);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  for (let i = 0; i < 20_000; i++) {
    const created = made + Math.floor(r() * 100 * DAY);
    const finished = r() < 0.8 ? created + Math.floor(r() * DAY) : undefined;
    const taskTimes = { ...(r() < 0.9 ? { created_at: created } : {}), ...(finished !== undefined ? { finished_at: finished } : {}) };
    const output: LockOutput = {
      type: "video",
      index: 0,
      variant: "main",
      ...(r() < 0.95 ? { path: "clips/a/video-1.mp4", size: 100, sha256: "d".repeat(64), ...(r() < 0.5 ? { etag: "dddddddd" } : {}) } : {}),
      ...(r() < 0.4 ? { deleted_at: created + Math.floor(r() * 60 * DAY) } : {}),
    };
    const local: LocalCopy = pick(["matches", "differs", "missing"]);
    const stored = pick([undefined, { size: 100 }, { size: 100, etag: "d".repeat(32) }, { size: 99 }, { size: 100, etag: "e".repeat(32) }]);
    const now = created + Math.floor(r() * 90 * DAY);
    const facts: ResultFacts = { output, task: taskTimes, local, now, ...(r() < 0.5 ? { inStore: () => stored } : {}) };
    const v = resultState(facts);
    const label = JSON.stringify({ i, facts: { ...facts, inStore: facts.inStore ? stored : "none" }, v });
    assert.is(v.state === "present", local === "matches" && output.path !== undefined, label);
    const storeMatches =
      facts.inStore !== undefined && stored !== undefined && stored.size === 100 && (output.etag === undefined || stored.etag === undefined || stored.etag === "d".repeat(32)) && output.path !== undefined;
    if (storeMatches) assert.is.not(v.state, "lost", label);
    // A recorded ETag fingerprint and another ETag in the store: never restored from it.
    if (output.etag !== undefined && stored?.etag === "e".repeat(32)) assert.not.ok(v.state === "restorable" && v.from === "store", label);
    const lastMade = finished ?? taskTimes.created_at;
    if (output.deleted_at === undefined && (lastMade === undefined || now < lastMade + SERVICE_RETENTION_MS)) assert.is.not(v.state, "lost", label);
    if (v.state === "lost") assert.ok(!storeMatches && (output.deleted_at !== undefined || now >= lastMade! + SERVICE_RETENTION_MS), label);
    if (v.state === "restorable" && v.from === "service") assert.is(output.deleted_at, undefined, label);
    // Same facts, same answer.
    assert.equal(resultState(facts), v, label);
  }
});

t.run();
