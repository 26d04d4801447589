// The region rule, pure (src/run/serviceCheck.ts): which service a base URL names (never a
// credential), and what a run does when the lockfile names another one: same service,
// a file from before services were recorded, a switch with nothing unfinished (recorded,
// told), unfinished tasks elsewhere (refused, naming both services, the tasks and the
// flag), and --switch-service (exactly the unfinished tasks are abandoned). Plus the
// header on disk: older files load without it and get it on the next write.

import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { checkService, EMULATOR_SERVICE, serviceIdentity, SWITCH_FLAG } from "../../src/run/serviceCheck.js";
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

test("header: written with the service, parsed back; a version-2 file without one still loads", () => {
  const tasks = records(["planned"]);
  const text = encodeLockFile("spring-campaign", tasks, "https://api.example.com/v1");
  assert.is(text.split("\n")[0], '{"lockfile_version":2,"name":"spring-campaign","service":"https://api.example.com/v1"}');
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
  assert.is(after.split("\n")[0], '{"lockfile_version":2,"name":"spring-campaign","service":"http://127.0.0.1:4010"}');
  assert.is((await readLockFile(path))?.service, "http://127.0.0.1:4010");
  // Opened again: named; a store that never calls setService leaves it as it is.
  await Effect.runPromise(LockStore.use(path, "spring-campaign", (store) => Effect.sync(() => assert.is(store.recordedService, "http://127.0.0.1:4010"))));
  assert.is((await readLockFile(path))?.service, "http://127.0.0.1:4010");
});

test.run();
