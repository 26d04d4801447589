// Lockfile format versions 2 and 3 (src/state/LockfileText.ts, TaskLine.ts): every task
// comes back exactly as it was written, a finished task fits the size budget, version-1
// and version-2 files and journals (committed fixtures written by those writers) are read
// by their own rules and rewritten as version 3 on the next write, a damaged line is
// named by its number, and a change to one task changes one line.

import { copyFile, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Effect } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { LockOutput, LockTask, TaskState } from "../../src/state/LockFile.js";
import { LockfileInvalid } from "../../src/state/LockfileError.js";
import { encodeLockFile, parseLockFileText } from "../../src/state/LockfileText.js";
import { journalPathOf } from "../../src/state/LockJournal.js";
import { LockStore } from "../../src/state/LockStore.js";
import { readLockFile, sha256Hex } from "../../src/state/readLockFile.js";
import { sameJson } from "../../src/state/sameJson.js";
import { stableJson, stableJsonLine } from "../../src/state/stableJson.js";
import { decodeTaskLine, defaultFileName, encodeTaskLine, idHashHex, lineRuleProblem, type TaskLine } from "../../src/state/TaskLine.js";
import { fileNameFor, usualExtension } from "../../src/manifest/fileNames.js";
import { lockSchemaProblems } from "../../src/state/validateLockFile.js";
import { shortHash } from "../../src/manifest/TaskIdentity.js";
import { task, taskId } from "./lockTask.js";
import { randomTask, rng } from "./randomTask.js";

const v1Fixture = fileURLToPath(new URL("../fixtures/lockfile-v1/demo.lock.json", import.meta.url));
const v2Fixture = fileURLToPath(new URL("../fixtures/lockfile-v2/demo.lock.json", import.meta.url));
const v2JournalFixture = fileURLToPath(new URL("../fixtures/lockfile-v2/demo.journal", import.meta.url));
const tempDir = () => mkdtemp(join(tmpdir(), "omnibatch-v2-"));
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect);

test("every task comes back from its line exactly, and every line matches the schema (2,000 generated tasks)", () => {
  const r = rng(7);
  // How often each version-3 rule was used: the generator must exercise all of them.
  const used = { stateLeftOut: 0, defaultFile: 0, noFile: 0, otherFile: 0 };
  for (let n = 0; n < 2000; n++) {
    const { id, task: t } = randomTask(r, "spring", n);
    const line = encodeTaskLine("spring", id, t);
    assert.not.ok(line.includes("\n"), "one line");
    const data = JSON.parse(line) as TaskLine;
    assert.equal(lockSchemaProblems("taskLine", data), [], line);
    assert.is(lineRuleProblem(data, 3), undefined, line);
    if (data.state === undefined) used.stateLeftOut++;
    for (const o of data.out ?? []) {
      if (o.file === null) used.noFile++;
      else if (typeof o.file === "string") used.otherFile++;
      else if (o.path === undefined && o.type !== "voice" && o.type !== "element") used.defaultFile++;
    }
    const back = decodeTaskLine("spring", data);
    assert.is(back.id, id);
    if (!sameJson(back.task, t)) assert.equal(back.task, t, `task ${n} round trip: ${line}`);
    // The v1 task schema accepts what comes back: the in-memory model is unchanged.
    assert.equal(lockSchemaProblems("task", back.task), [], line);
  }
  for (const [rule, count] of Object.entries(used)) assert.ok(count > 50, `${rule} used ${count} times`);
});

test("a version-2 line is read by version 2's rules: an output without a file has none, and the state is required", () => {
  const line = {
    id: "spring-clips-abcdefghijklmnopqrst",
    kind: "video",
    state: "succeeded",
    at: [1_790_000_000_000],
    hash: "h1",
    vars: { a: 1 },
    out: [{ remote_id: "r1" }, { type: "image", file: "image-2.png" }],
  } as const satisfies TaskLine;
  assert.is(lineRuleProblem(line, 2), undefined);
  const v2 = decodeTaskLine("spring", line, 2).task;
  assert.is(v2.outputs[0]!.path, undefined, "version 2: no file");
  assert.is(v2.outputs[1]!.path, "clips/1/image-2.png");
  const v3 = decodeTaskLine("spring", line, 3).task;
  assert.is(v3.outputs[0]!.path, "clips/1/video-1.mp4", "version 3: the default name");
  const { state: _, ...stateless } = line;
  assert.match(lineRuleProblem(stateless, 2) ?? "", /`state` is required in lockfile version 2/);
  assert.is(decodeTaskLine("spring", stateless, 3).task.state, "downloaded");
  assert.match(lineRuleProblem({ ...line, out: [{ file: null }] }, 2) ?? "", /"file": null/);
});

test("the default file name of version 3 is the downloader's name for a result whose link and type name no extension", () => {
  const types = ["video", "image", "audio", "voice", "element"] as const;
  const variants = ["main", "watermark", "mp3", "wav", "meta"] as const;
  let named = 0;
  for (const type of types)
    for (const variant of variants)
      for (const index of [0, 1, 9]) {
        const o = { type, index, variant };
        const name = defaultFileName(o);
        if (usualExtension(o) === "bin") assert.is(name, undefined, `${type}/${variant}: no default name`);
        else {
          assert.is(name, fileNameFor(o, usualExtension(o)), `${type}/${variant}/${index}`);
          named++;
        }
      }
  assert.ok(named > 30);
  assert.is(defaultFileName({ type: "image", index: 2, variant: "main" }), "image-3.png");
  assert.is(defaultFileName({ type: "video", index: 0, variant: "watermark" }), "video-1.watermark.mp4");
});

test("the hash an id carries (its last 20 characters) is read back as the first 25 hex digits of the request hash", () => {
  const r = rng(3);
  for (let n = 0; n < 500; n++) {
    const hex = Array.from({ length: 64 }, () => "0123456789abcdef"[Math.floor(r() * 16)]).join("");
    assert.is(idHashHex(`spring-clips-${shortHash(hex)}`), hex.slice(0, 25));
  }
  assert.is(idHashHex("spring-clips-ABCDEFGHIJKLMNOPQRST"), undefined, "not base32");
  assert.is(idHashHex("short"), undefined);
});

test("a finished image task of the throughput benchmark's shape takes under 360 bytes with its separator (400 is the goal)", () => {
  // Values from a real run of the throughput manifest on the emulator (the 1000th task: a 3-digit matrix value).
  const finished: LockTask = {
    job: "stills",
    kind: "image",
    vars: { a: 19, b: 999 },
    dir: "stills/19_999",
    request_hash: `${idHashHex("bench-throughput-stills-4hj7dryxnxisyhkyeisk")}31241017398ca9c3690c47bc2b229382431beff`,
    take: 1,
    attempt: 1,
    state: "downloaded",
    task_id: "7000000000019999",
    planned_at: 1795461916199,
    submitted_at: 1795461917706,
    created_at: 1795461917892,
    finished_at: 1795461918248,
    updated_at: 1795461918542,
    outputs: [{ type: "image", index: 0, variant: "main", path: "stills/19_999/image-1.png", size: 806, sha256: "3f623ae57834f2ad810cc77c7ff7255a90a9d418221e29520d4ddb4281f5db0c" }],
    billing: [{ charge_type: "cash", amount: "0.024", list_price: "0.03" }],
  };
  const line = encodeTaskLine("bench-throughput", "bench-throughput-stills-4hj7dryxnxisyhkyeisk", finished);
  const bytes = Buffer.byteLength(`\n${line}\n`);
  assert.ok(bytes <= 360, `${bytes} bytes: ${line}`);
  // Version 3 leaves out its state (downloaded) and its file's name (the default).
  assert.not.ok(line.includes('"state"') || line.includes('"file"'), line);
  assert.ok(Buffer.byteLength(stableJson(finished)) > 2 * bytes, "well under the version-1 size");
  // With the outputs in a store, each result also keeps its ETag's 8-character fingerprint: 18 bytes more.
  const stored = encodeTaskLine("bench-throughput", "bench-throughput-stills-4hj7dryxnxisyhkyeisk", { ...finished, outputs: [{ ...finished.outputs[0]!, etag: "b1946ac9" }] });
  assert.is(Buffer.byteLength(`\n${stored}\n`) - bytes, 18, stored);
});

test("a committed version-1 lockfile is read as it was, left alone by a run that changes nothing, and rewritten as version 3 by the next write", async () => {
  const dir = await tempDir();
  const path = join(dir, "demo.lock.json");
  await copyFile(v1Fixture, path);
  const v1Text = await readFile(path, "utf8");
  const expected = JSON.parse(v1Text) as { lockfile_version: number; name: string; tasks: Record<string, LockTask> };
  assert.is(expected.lockfile_version, 1);
  const read = await readLockFile(path);
  assert.ok(read);
  assert.is(read!.name, "demo");
  assert.equal(Object.keys(read!.tasks).sort(), Object.keys(expected.tasks).sort());
  for (const [id, t] of Object.entries(expected.tasks)) assert.ok(sameJson(read!.tasks[id], t), `task ${id} as in the v1 file`);

  // Nothing changed: no write at all.
  await run(LockStore.use(path, "demo", (store) => Effect.forEach(Object.entries(expected.tasks), ([id, t]) => store.put(id, t))));
  assert.is(await readFile(path, "utf8"), v1Text, "a run with nothing to do leaves the v1 file untouched");

  // One change: the file is version 3, every task kept, the changed one changed.
  const [firstId, first] = Object.entries(expected.tasks)[0]!;
  const stats = await touchOne(path, firstId, first);
  assert.is(stats.compactions, 1, "the first write over a v1 file is a full version-3 write (no journal over a v1 file)");
  const v3Text = await readFile(path, "utf8");
  const lines = v3Text.split("\n");
  assert.is(lines[0], '{"lockfile_version":3,"name":"demo"}');
  assert.is(lines.filter((l) => l.startsWith('{"id":')).length, Object.keys(expected.tasks).length, "one line per task");
  assert.ok(v3Text.length * 2 < v1Text.length, `v3 ${v3Text.length} B against v1 ${v1Text.length} B`);
  const again = await readLockFile(path);
  for (const [id, t] of Object.entries(expected.tasks)) {
    const want = id === firstId ? { ...t, updated_at: t.updated_at + 1 } : t;
    assert.ok(sameJson(again!.tasks[id], want), `task ${id} after the rewrite`);
  }
});

/** One run that changes one task (its updated_at), flushes, and returns the store's write counts. */
const touchOne = (path: string, id: string, task: LockTask) =>
  run(
    LockStore.use(path, "demo", (store) =>
      Effect.gen(function* () {
        yield* store.put(id, { ...task, updated_at: task.updated_at + 1 });
        yield* store.flush;
        return yield* store.stats;
      }),
    ),
  );

test("a committed version-2 lockfile loads to the same model as the version-1 one, is left alone by a run that changes nothing, and is rewritten as version 3 by the next write", async () => {
  const dir = await tempDir();
  const path = join(dir, "demo.lock.json");
  await copyFile(v2Fixture, path);
  const v2Text = await readFile(path, "utf8");
  assert.ok(v2Text.startsWith('{"lockfile_version":2,"name":"demo"}\n'));
  const fromV1 = await readLockFile(v1Fixture);
  const fromV2 = await readLockFile(path);
  assert.ok(fromV1 && fromV2);
  assert.is(Object.keys(fromV2!.tasks).length, 10);
  assert.equal(Object.keys(fromV2!.tasks).sort(), Object.keys(fromV1!.tasks).sort());
  for (const [id, t] of Object.entries(fromV1!.tasks)) assert.ok(sameJson(fromV2!.tasks[id], t), `task ${id}: the v2 file holds what the v1 file does`);

  await run(LockStore.use(path, "demo", (store) => Effect.forEach(Object.entries(fromV2!.tasks), ([id, t]) => store.put(id, t))));
  assert.is(await readFile(path, "utf8"), v2Text, "a run with nothing to do leaves the v2 file untouched");

  const [firstId, first] = Object.entries(fromV2!.tasks)[0]!;
  const stats = await touchOne(path, firstId, first);
  assert.is(stats.compactions, 1, "the first write over a v2 file is a full version-3 write (no v3 journal line over v2 lines)");
  const v3Text = await readFile(path, "utf8");
  const lines = v3Text.split("\n");
  assert.is(lines[0], '{"lockfile_version":3,"name":"demo"}');
  assert.is(lines.filter((l) => l.startsWith('{"id":')).length, 10, "one line per task");
  assert.is(lines.filter((l) => l.includes('"state"') || l.includes('"file"')).length, 0, "all downloaded, all default names: left out");
  assert.ok(v3Text.length < v2Text.length, `v3 ${v3Text.length} B against v2 ${v2Text.length} B`);
  const again = await readLockFile(path);
  for (const [id, t] of Object.entries(fromV1!.tasks)) {
    const want = id === firstId ? { ...t, updated_at: t.updated_at + 1 } : t;
    assert.ok(sameJson(again!.tasks[id], want), `task ${id} after the rewrite`);
  }
});

test("a version-2 journal left by a killed version-2 run is replayed by version 2's rules and folded into a version-3 file", async () => {
  const dir = await tempDir();
  const path = join(dir, "demo.lock.json");
  await copyFile(v2Fixture, path);
  await copyFile(v2JournalFixture, journalPathOf(path));
  const before = (await readLockFile(v1Fixture))!;
  const id = "demo-clips-7mq4wnhnlpcxtaqnfiyt";
  const t = before.tasks[id]!;
  // The journal's line: succeeded again, its output's remote id only (no file yet).
  const expected = { ...t, state: "succeeded", updated_at: t.updated_at + 5, outputs: [{ type: "video", index: 0, variant: "main", remote_id: t.outputs[0]!.remote_id }] };
  const read = (await readLockFile(path))!;
  assert.ok(sameJson(read.tasks[id], expected), JSON.stringify(read.tasks[id]));
  assert.is(read.tasks[id]!.outputs[0]!.path, undefined, "read by version 2's rules: no file, not the default name");
  const other = "demo-keyframes-r5ww3eu4altoj4rq42sg";
  assert.is(read.tasks[other]!.updated_at, before.tasks[other]!.updated_at + 7);
  await run(LockStore.use(path, "demo", () => Effect.void));
  const text = await readFile(path, "utf8");
  assert.ok(text.startsWith('{"lockfile_version":3,"name":"demo"}\n'), "folded at open into a version-3 file");
  assert.is(await readFile(journalPathOf(path), "utf8").catch(() => "gone"), "gone", "the journal is gone");
  assert.ok(text.includes('"file":null'), "version 3 says the output has no file");
  const after = (await readLockFile(path))!;
  for (const [taskId, task] of Object.entries(read.tasks)) assert.ok(sameJson(after.tasks[taskId], task), `task ${taskId} after the fold`);
});

test("a version-1 journal left by a killed version-1 run is replayed and folded into a version-3 file", async () => {
  const dir = await tempDir();
  const path = join(dir, "demo.lock.json");
  await copyFile(v1Fixture, path);
  const v1Text = await readFile(path, "utf8");
  const tasks = (JSON.parse(v1Text) as { tasks: Record<string, LockTask> }).tasks;
  const [id, t] = Object.entries(tasks)[1]!;
  const changed = { ...t, state: "failed" as const, error: { message: "late", at: t.updated_at + 5 }, updated_at: t.updated_at + 5 };
  // The version-1 journal format: header {base, journal: 1, name}, then {id, task} records, a torn tail.
  await writeFile(
    journalPathOf(path),
    `${stableJsonLine({ base: sha256Hex(v1Text), journal: 1, name: "demo" })}\n${stableJsonLine({ id, task: changed })}\n{"id":"torn`,
  );
  assert.ok(sameJson((await readLockFile(path))!.tasks[id], changed), "readers see the journal's change");
  await run(LockStore.use(path, "demo", () => Effect.void));
  const text = await readFile(path, "utf8");
  assert.ok(text.startsWith('{"lockfile_version":3,"name":"demo"}\n'), "folded at open into a version-3 file");
  assert.is(await readFile(journalPathOf(path), "utf8").catch(() => "gone"), "gone", "the journal is gone");
  assert.ok(sameJson((await readLockFile(path))!.tasks[id], changed));
});

test("a damaged lockfile is reported with the numbers of its damaged lines and kept untouched", async () => {
  const dir = await tempDir();
  const path = join(dir, "m.lock.json");
  const tasks = new Map(Array.from({ length: 6 }, (_, n) => [taskId(n), task(n)] as const));
  const good = encodeLockFile("spring-campaign", tasks);
  const lines = good.split("\n");
  // Lines: 1 header, 2 blank, 3 task, 4 blank, 5 task, ...
  assert.is(lines[1], "");
  lines[4] = lines[4]!.replace('"state":"planned"', '"state":"exploded"');
  lines[8] = lines[8]!.slice(0, 40);
  const damaged = lines.join("\n");
  await writeFile(path, damaged);
  const error = (await readLockFile(path).catch((e: unknown) => e)) as LockfileInvalid;
  assert.instance(error, LockfileInvalid);
  assert.match(error.message, /line 5: task [^:]+: \/state: must be one of "planned"/);
  assert.match(error.message, /line 9: not valid JSON/);
  assert.match(error.message, /was kept untouched/);
  const opened = await run(Effect.either(LockStore.use(path, "spring-campaign", () => Effect.void)));
  assert.is(opened._tag, "Left", "the store refuses it too");
  assert.is(await readFile(path, "utf8"), damaged, "the file is kept");

  const conflicted = good.split("\n");
  conflicted.splice(3, 0, "<<<<<<< HEAD");
  await writeFile(path, conflicted.join("\n"));
  const conflict = (await readLockFile(path).catch((e: unknown) => e)) as LockfileInvalid;
  assert.match(conflict.message, /line 4: a git merge conflict marker/);

  const twice = good.split("\n");
  twice.push("", twice[2]!);
  await writeFile(path, twice.join("\n"));
  const duplicate = (await readLockFile(path).catch((e: unknown) => e)) as LockfileInvalid;
  const firstId = (JSON.parse(twice[2]!) as { id: string }).id;
  assert.match(duplicate.message, new RegExp(`line ${twice.length}: task ${firstId} appears again \\(first on line 3\\)`));

  // A version-2 header over a line only version 3 can mean (a downloaded task, state left out).
  const v3Line = encodeTaskLine("spring-campaign", taskId(1), task(1, { state: "downloaded" }));
  assert.not.ok(v3Line.includes('"state"'));
  await writeFile(path, `{"lockfile_version":2,"name":"spring-campaign"}\n\n${v3Line}\n`);
  const mixed = (await readLockFile(path).catch((e: unknown) => e)) as LockfileInvalid;
  assert.instance(mixed, LockfileInvalid);
  assert.match(mixed.message, /version 2\): line 3: task [^:]+: `state` is required in lockfile version 2/);
  // The same line under its own header reads.
  await writeFile(path, `{"lockfile_version":3,"name":"spring-campaign"}\n\n${v3Line}\n`);
  assert.is((await readLockFile(path))!.tasks[taskId(1)]!.state, "downloaded");
});

test("writes keep the header line and change exactly the line of each changed task", async () => {
  const path = join(await tempDir(), "m.lock.json");
  const ids = Array.from({ length: 50 }, (_, n) => n);
  await run(LockStore.use(path, "spring-campaign", (store) => Effect.forEach(ids, (n) => store.put(taskId(n), task(n)))));
  const before = (await readFile(path, "utf8")).split("\n");
  const changed = [3, 4, 17];
  await run(
    LockStore.use(path, "spring-campaign", (store) =>
      Effect.forEach(changed, (n) => store.update(taskId(n), (t) => ({ ...t, state: "submitted", task_id: `svc-${n}`, updated_at: t.updated_at + 1 }))),
    ),
  );
  const after = (await readFile(path, "utf8")).split("\n");
  assert.is(after.length, before.length);
  assert.is(after[0], before[0], "the header does not change");
  const differing = after.flatMap((line, i) => (line === before[i] ? [] : [line]));
  assert.is(differing.length, changed.length, "one line per changed task");
  for (const n of changed) assert.ok(differing.some((l) => l.startsWith(`{"id":"${taskId(n)}"`)));
  const parsed = parseLockFileText(after.join("\n"));
  assert.ok(typeof parsed !== "string" && parsed.tasks.size === ids.length);
});

test("a task id on a later line again names its first line, found only then (no map of every id to its line)", () => {
  // Line 3: task 1, superseded by task 2 (so line 3 holds task 2's id too); line 5: task 2.
  const first = encodeTaskLine("spring-campaign", taskId(1), task(1, { superseded_by: taskId(2) }));
  const second = encodeTaskLine("spring-campaign", taskId(2), task(2));
  assert.ok(first.includes(taskId(2)), "the earlier line names the id without being its task");
  const lines = ['{"lockfile_version":3,"name":"spring-campaign"}', "", first, "", second, "", second, "", second];
  const parsed = parseLockFileText(lines.join("\n"));
  assert.type(parsed, "string");
  assert.match(parsed as string, new RegExp(`line 7: task ${taskId(2)} appears again \\(first on line 5\\)`));
  assert.match(parsed as string, new RegExp(`line 9: task ${taskId(2)} appears again \\(first on line 5\\)`));
  // Each id once: nothing to say.
  const once = parseLockFileText(lines.slice(0, 5).join("\n"));
  assert.ok(typeof once !== "string" && once.tasks.size === 2);
});

test("a lockfile parsed with the caller's strings (a run's plan) gives the same records, keeps its own values where the plan's differ, and reports damage the same", () => {
  const r = rng(11);
  const tasks = new Map<string, LockTask>();
  for (let n = 0; n < 2000; n++) {
    const { id, task: t } = randomTask(r, "spring", n);
    tasks.set(id, t);
  }
  const text = encodeLockFile("spring", tasks);
  // Per id: equal strings (copies), another request hash, or nothing known.
  const copy = (s: string) => s.split("").join("");
  const known = new Map<string, { id: string; requestHash: string }>();
  let i = 0;
  for (const [id, t] of tasks) {
    const mode = i++ % 3;
    if (mode === 2) continue;
    known.set(id, { id: copy(id), requestHash: mode === 1 ? `${t.request_hash}0` : copy(t.request_hash) });
  }
  const plain = parseLockFileText(text);
  const shared = parseLockFileText(text, (id) => known.get(id));
  if (typeof plain === "string" || typeof shared === "string") throw new Error(`unreadable: ${String(plain)} ${String(shared)}`);
  assert.equal([...shared.tasks.keys()], [...plain.tasks.keys()]);
  for (const [id, t] of plain.tasks) {
    if (!sameJson(shared.tasks.get(id), t)) assert.equal(shared.tasks.get(id), t, id);
    assert.equal(t, tasks.get(id), id);
  }
  // A damaged line: the same message either way.
  const lines = text.split("\n");
  lines[6] = lines[6]!.replace('"at":[', '"at":["x",');
  lines[8] = lines[8]!.slice(0, 40);
  const damaged = lines.join("\n");
  const message = parseLockFileText(damaged);
  assert.type(message, "string");
  assert.ok(/line 7: .*line 9: /.test(message as string), String(message));
  assert.is(parseLockFileText(damaged, (id) => known.get(id)), message);
});

test("tasks charged alike one after the other share one frozen billing list; any differing field gives a list of its own, equal to what was written", () => {
  const cash = { charge_type: "cash", amount: "0.024", cash_type: "balance", currency: "USD", list_price: "0.03" } as const;
  const bills: LockTask["billing"][] = [
    [cash],
    [{ ...cash }],
    [{ ...cash, amount: "0.048" }],
    [{ ...cash, amount: "0.048" }],
    [{ charge_type: "unit", amount: "0.024", package_type: "image" }],
    [{ ...cash }],
    [{ ...cash, list_price: undefined as unknown as string }].map(({ list_price: _, ...rest }) => rest),
    [cash, { ...cash }],
    [],
  ];
  // One job, ids in the order of n: the file's order (by id) is the list's.
  const tasks = new Map(bills.map((billing, n) => [`spring-campaign-keyframes-${n.toString(36).padStart(8, "0")}`, task(n, { job: "keyframes", kind: "image", state: "downloaded", billing })] as const));
  const parsed = parseLockFileText(encodeLockFile("spring-campaign", tasks));
  if (typeof parsed === "string") throw new Error(parsed);
  const got = [...tasks.keys()].map((id) => parsed.tasks.get(id)!.billing);
  bills.forEach((b, n) => assert.equal(got[n], b, `task ${n}`));
  assert.ok(got[0] === got[1] && Object.isFrozen(got[0]) && Object.isFrozen(got[0]![0]), "the same charge: one frozen list");
  assert.ok(got[2] === got[3] && got[1] !== got[2], "a charge of its own, shared with the next like it");
  assert.ok(got[4] !== got[3] && got[5] !== got[4] && got[6] !== got[5], "a unit charge, then cash again, then cash without a list price: each its own");
  assert.ok(got[7]!.length === 2 && !Object.isFrozen(got[7]) && got[8]!.length === 0, "two entries, or none: decoded for the task alone");
  assert.throws(() => (got[0] as LockTask["billing"][number][]).push(cash), "a shared list cannot be changed");
});

test.run();
