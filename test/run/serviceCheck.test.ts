// The region rule, pure (src/run/serviceCheck.ts): which service a base URL names (never a
// credential), and what a run does when the lockfile names another one: same service,
// a file from before services were recorded, a switch with nothing unfinished (recorded,
// told), unfinished tasks elsewhere (refused, naming both services, the tasks and the
// flag), and --switch-service (exactly the unfinished tasks are abandoned, their records
// kept: a property over generated lockfiles; the attempt that replaced each is named once
// created). Plus the header on disk: older files load without it and get it on the next write.

import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { abandonedSuccessors, abandonRecord, checkService, EMULATOR_SERVICE, serviceIdentity, SWITCH_FLAG, unfinishedThere } from "../../src/run/serviceCheck.js";
import { standings } from "../../src/report/standing.js";
import type { LockTask, TaskState } from "../../src/state/LockFile.js";
import { encodeLockFile, parseLockFileText } from "../../src/state/LockfileText.js";
import { LockStore } from "../../src/state/LockStore.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { task, taskId } from "../state/lockTask.js";

const records = (states: readonly TaskState[]): Map<string, LockTask> =>
  new Map(states.map((state, i) => [taskId(i), task(i, { state, ...(state === "planned" ? {} : { task_id: `t${i}` }) })]));

test("serviceIdentity: origin and path only; no credentials, query, fragment or trailing slash", () => {
  assert.is(serviceIdentity("https://api.example.com"), "https://api.example.com");
  assert.is(serviceIdentity("https://api.example.com/"), "https://api.example.com");
  assert.is(serviceIdentity("https://API.Example.com:443/v1//"), "https://api.example.com/v1");
  assert.is(serviceIdentity("http://127.0.0.1:4010/omni"), "http://127.0.0.1:4010/omni");
  const withSecrets = serviceIdentity("https://user:sk-secret@api-sg.example.com/v1?key=sk-other#frag");
  assert.is(withSecrets, "https://api-sg.example.com/v1");
  assert.not.ok(withSecrets.includes("secret") || withSecrets.includes("sk-other"));
  assert.is.not(serviceIdentity("http://127.0.0.1:4010"), serviceIdentity("http://127.0.0.1:4011"));
});

const base = { current: "https://api-sg.example.com", switchAllowed: false, lockfile: "/p/m.lock.json" };

test("same service, or none recorded yet (older file): run, record it", () => {
  const recs = records(["submitted", "processing"]);
  assert.equal(checkService({ ...base, recorded: base.current, records: recs }), { _tag: "Same" });
  assert.equal(checkService({ ...base, recorded: undefined, records: recs }), { _tag: "Record" });
  assert.equal(checkService({ ...base, recorded: EMULATOR_SERVICE, current: EMULATOR_SERVICE, records: recs }), { _tag: "Same" });
});

test("another service with nothing unfinished there: recorded, and the user is told", () => {
  const d = checkService({ ...base, recorded: "https://api.example.com", records: records(["planned", "downloaded", "failed", "rejected"]) });
  assert.is(d._tag, "Record");
  assert.ok(d._tag === "Record" && d.note?.includes("https://api.example.com") && d.note.includes(base.current));
});

test("another service with unfinished tasks there: refused, naming both services, the tasks, the flag; every unfinished state counts", () => {
  for (const state of ["submitting", "submitted", "processing", "succeeded"] as const) {
    const recs = records(["downloaded", state, "planned"]);
    const d = checkService({ ...base, recorded: "https://api.example.com", records: recs });
    assert.is(d._tag, "Refuse", state);
    if (d._tag !== "Refuse") continue;
    assert.ok(d.message.includes("https://api.example.com") && d.message.includes(base.current), d.message);
    assert.ok(d.message.includes("1 task(s)") && d.message.includes(taskId(1)), d.message);
    assert.not.ok(d.message.includes(taskId(0)), "a downloaded task is not named");
    assert.ok(d.message.includes(SWITCH_FLAG) && d.message.includes("Nothing was sent"), d.message);
  }
});

test("--switch-service: exactly the unfinished tasks are abandoned, and the message says they are paid again", () => {
  const recs = records(["downloaded", "submitted", "planned", "succeeded", "failed", "submitting"]);
  const d = checkService({ ...base, recorded: "https://api.example.com", records: recs, switchAllowed: true });
  assert.is(d._tag, "Switch");
  if (d._tag !== "Switch") return;
  assert.equal([...d.abandon].sort(), [taskId(1), taskId(3), taskId(5)].sort());
  assert.is(d.from, "https://api.example.com");
  assert.ok(d.message.includes("paid again"), d.message);
});

test("--switch-service: a succeeded task (paid, results waiting there) is named apart in the refusal and the switch", () => {
  const recs = records(["succeeded", "processing", "downloaded"]);
  const refused = checkService({ ...base, recorded: "https://api.example.com", records: recs });
  assert.ok(refused._tag === "Refuse" && refused.message.includes("2 task(s)") && refused.message.includes("1 of them finished there (paid)"), JSON.stringify(refused));
  const none = checkService({ ...base, recorded: "https://api.example.com", records: records(["processing"]) });
  assert.ok(none._tag === "Refuse" && !none.message.includes("finished there (paid)"), JSON.stringify(none));
});

test("abandonRecord adds the mark and keeps every other field as it was (outputs, billing, ids, times)", () => {
  const rec = task(3, {
    state: "succeeded",
    task_id: "t3",
    submitted_at: 1_700_000_000_100,
    created_at: 1_700_000_000_200,
    finished_at: 1_700_000_000_300,
    updated_at: 1_700_000_000_300,
    outputs: [{ type: "video", index: 0, variant: "main", remote_id: "r-1" }],
    billing: [{ charge_type: "cash", amount: "0.024", currency: "USD" }],
    error: { message: "late", at: 1_700_000_000_250 },
  });
  const at = 1_700_000_009_000;
  const out = abandonRecord(rec, "https://api.example.com", at);
  const { abandoned, updated_at, ...rest } = out;
  const { updated_at: _u, ...was } = rec;
  assert.equal(rest, was);
  assert.equal(abandoned, { service: "https://api.example.com", at });
  assert.is(updated_at, at);
  assert.not.ok(unfinishedThere(out), "an abandoned record is never abandoned again");
});

// A small seeded generator: the same lockfiles on every run.
const rng = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
const ALL_STATES: TaskState[] = ["planned", "submitting", "submitted", "processing", "succeeded", "downloaded", "failed", "rejected"];

test("property (300 generated lockfiles): a switch abandons exactly the unfinished records, keeps every record's history and charges, and a second switch abandons none of them again", () => {
  const r = rng(7);
  for (let round = 0; round < 300; round++) {
    const n = 1 + Math.floor(r() * 12);
    const recs = new Map<string, LockTask>();
    for (let i = 0; i < n; i++) {
      const state = ALL_STATES[Math.floor(r() * ALL_STATES.length)]!;
      recs.set(
        taskId(i),
        task(i, {
          state,
          ...(state === "planned" ? {} : { task_id: `t${i}` }),
          ...(r() < 0.5 ? { billing: [{ charge_type: "cash" as const, amount: `0.0${1 + Math.floor(r() * 9)}`, currency: "USD" }] } : {}),
          ...(r() < 0.3 ? { outputs: [{ type: "image" as const, index: 0, variant: "main" as const, remote_id: `r${i}` }] } : {}),
          ...(r() < 0.15 ? { abandoned: { service: "https://old.example.com", at: 1_600_000_000_000 } } : {}),
        }),
      );
    }
    const d = checkService({ ...base, recorded: "https://api.example.com", records: recs, switchAllowed: true });
    const expected = [...recs].filter(([, t]) => ["submitting", "submitted", "processing", "succeeded"].includes(t.state) && t.abandoned === undefined).map(([id]) => id).sort();
    if (expected.length === 0) {
      assert.is(d._tag, "Record");
      continue;
    }
    assert.is(d._tag, "Switch");
    if (d._tag !== "Switch") continue;
    assert.equal([...d.abandon], expected);
    const now = 1_800_000_000_000;
    const after = new Map(recs);
    for (const id of d.abandon) after.set(id, abandonRecord(recs.get(id)!, d.from, now));
    const cash = (m: Map<string, LockTask>) => [...m.values()].flatMap((t) => t.billing).map((b) => b.amount).join(",");
    assert.is(cash(after), cash(recs), "every charge kept, in order");
    for (const [id, t] of recs) {
      const a = after.get(id)!;
      assert.equal(a.outputs, t.outputs, id);
      const marked = d.abandon.includes(id);
      const { abandoned: mark, ...kept } = a;
      assert.equal({ ...kept, ...(marked ? {} : mark ? { abandoned: mark } : {}), updated_at: 0 }, { ...t, updated_at: 0 }, id);
      if (marked) assert.equal(a.abandoned, { service: "https://api.example.com", at: now }, id);
    }
    // From the lockfile alone, every abandoned record stands apart (superseded), never current.
    const s = standings({ lockfile_version: 2, name: "spring-campaign", tasks: Object.fromEntries(after) });
    for (const [id, t] of after) assert.is(s.of.get(id) === "superseded", t.abandoned !== undefined, id);
    // Moving on again: nothing abandoned is abandoned twice.
    const again = checkService({ ...base, recorded: base.current, current: "https://third.example.com", records: after, switchAllowed: true });
    if (again._tag === "Switch") for (const id of again.abandon) assert.is(after.get(id)!.abandoned, undefined, id);
  }
});

test("abandonedSuccessors: the next attempt at the same job, folder and take, once created (not planned, not rejected); never twice", () => {
  const old = task(1, { state: "processing", task_id: "t1", attempt: 1, abandoned: { service: "https://a.example.com", at: 5 } });
  const next = (state: TaskState, over: Partial<LockTask> = {}) => task(1, { state, attempt: 2, ...over });
  assert.equal(abandonedSuccessors({ old, new: next("planned") }), []);
  assert.equal(abandonedSuccessors({ old, new: next("rejected") }), []);
  assert.equal(abandonedSuccessors({ old, new: next("submitting") }), [["old", "new"]]);
  assert.equal(abandonedSuccessors({ old, new: next("downloaded") }), [["old", "new"]]);
  assert.equal(abandonedSuccessors({ old, other: next("downloaded", { dir: "elsewhere" }) }), [], "another folder is another task");
  assert.equal(abandonedSuccessors({ old, other: next("downloaded", { take: 2 }) }), [], "another take is another task");
  assert.equal(abandonedSuccessors({ old, other: next("downloaded", { attempt: 3 }) }), [], "only the very next attempt");
  assert.equal(abandonedSuccessors({ old: { ...old, superseded_by: "new" }, new: next("downloaded") }), [], "already named");
  assert.equal(abandonedSuccessors({ plain: task(1, { state: "failed", attempt: 1 }), new: next("downloaded") }), [], "a failed attempt is no abandoned one");
});

test("header: written with the service, parsed back; a file without one still loads", () => {
  const tasks = records(["planned"]);
  const text = encodeLockFile("spring-campaign", tasks, "https://api.example.com/v1");
  assert.is(text.split("\n")[0], '{"lockfile_version":3,"name":"spring-campaign","service":"https://api.example.com/v1"}');
  const parsed = parseLockFileText(text);
  assert.ok(typeof parsed !== "string" && parsed.service === "https://api.example.com/v1");
  const older = parseLockFileText(encodeLockFile("spring-campaign", tasks));
  assert.ok(typeof older !== "string" && older.service === undefined && older.tasks.size === 1);
});

test("store: a file without the service loads (recordedService undefined) and gets it on the next write, not before", async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-service-"));
  const path = join(dir, "spring-campaign.lock.json");
  await writeFile(path, encodeLockFile("spring-campaign", records(["downloaded"])));
  const before = await readFile(path, "utf8");
  await Effect.runPromise(
    LockStore.use(path, "spring-campaign", (store) =>
      Effect.gen(function* () {
        assert.is(store.recordedService, undefined);
        yield* store.setService("http://127.0.0.1:4010");
        yield* store.flush; // no task changed: the header alone makes the write
      }),
    ),
  );
  const after = await readFile(path, "utf8");
  assert.is.not(after, before);
  assert.is(after.split("\n")[0], '{"lockfile_version":3,"name":"spring-campaign","service":"http://127.0.0.1:4010"}');
  assert.is((await readLockFile(path))?.service, "http://127.0.0.1:4010");
  // Opened again: named; a store that never calls setService leaves it as it is.
  await Effect.runPromise(LockStore.use(path, "spring-campaign", (store) => Effect.sync(() => assert.is(store.recordedService, "http://127.0.0.1:4010"))));
  assert.is((await readLockFile(path))?.service, "http://127.0.0.1:4010");
});

test.run();
