// Every path a lockfile names (a task's `dir`, its outputs' files) is checked when the
// lockfile is read: one that climbs out of the outputs folder or store prefix (`..`, an
// absolute path, a drive letter, a NUL) makes the file damaged, its line and task named
// (exit 2), in a version-3 file, a version-1 document and a journal alike. The rule is
// fs/insidePath.ts `outsideProblem`, the one resolveInside and the store's keys use.

import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { outsideProblem } from "../../src/fs/insidePath.js";
import type { LockTask } from "../../src/state/LockFile.js";
import { LockfileInvalid } from "../../src/state/LockfileError.js";
import { encodeLockFile, parseLockFileText } from "../../src/state/LockfileText.js";
import { encodeJournalHeader, encodeJournalRecord } from "../../src/state/LockJournal.js";
import { parseLockState, readLockFile, sha256Hex } from "../../src/state/readLockFile.js";
import { task, taskId } from "./lockTask.js";

const NAME = "spring-campaign";
const downloaded = (n: number, overrides: Partial<LockTask> = {}): LockTask => {
  const t = task(n, { state: "downloaded" });
  return {
    ...t,
    outputs: [{ type: t.kind, index: 0, variant: "main", path: `${t.dir}/${t.kind}-1.${t.kind === "image" ? "png" : "mp4"}`, size: 10, sha256: "a".repeat(64) }],
    ...overrides,
  };
};

test("the rule: plain and normalised paths inside pass; .. out, absolute, drive letters, NUL and the folder itself do not", () => {
  for (const ok of ["a", "job/task/image-1.png", "job//task/./f.png", "job/x/../f.png", "job/"]) assert.is(outsideProblem(ok), undefined, ok);
  for (const bad of ["..", "../x", "job/../../x", "/etc/passwd", "\\x", "C:/x", "c:x", "a\0b", "", ".", "a/..", "a\\..\\..\\x"]) {
    assert.type(outsideProblem(bad), "string", JSON.stringify(bad));
  }
});

test("a version-3 line whose dir climbs out is damage, its line and task named; so is an output's file or path", () => {
  const tasks = new Map<string, LockTask>([
    [taskId(2), downloaded(2)],
    [taskId(4), downloaded(4)],
  ]);
  const good = encodeLockFile(NAME, tasks);
  assert.not.type(parseLockFileText(good), "string", "plain paths are read");
  const lines = good.split("\n");
  const at = lines.findIndex((l) => l.includes(taskId(4)));
  const edit = (change: (line: Record<string, unknown>) => Record<string, unknown>): string => {
    const copy = [...lines];
    copy[at] = JSON.stringify(change(JSON.parse(copy[at]!) as Record<string, unknown>));
    return copy.join("\n");
  };
  const dir = parseLockFileText(edit((l) => ({ ...l, dir: "../../../escape" })));
  assert.type(dir, "string");
  assert.match(dir as string, `line ${at + 1}: task ${taskId(4)}: its folder ("dir") "../../../escape" climbs out with '..'`);
  const file = parseLockFileText(edit((l) => ({ ...l, out: [{ file: "../../../x.png", size: 10, sha256: "a".repeat(64) }] })));
  assert.match(file as string, `line ${at + 1}: task ${taskId(4)}: output 1's file`);
  assert.match(file as string, "climbs out");
  const absolute = parseLockFileText(edit((l) => ({ ...l, out: [{ path: "/etc/passwd", size: 10, sha256: "a".repeat(64) }] })));
  assert.match(absolute as string, `output 1's file "/etc/passwd" is an absolute path`);
});

test("readLockFile rejects such a file with LockfileInvalid (exit 2) naming the file and line; a version-1 document is checked too", async () => {
  const dir = await mkdtemp(join(tmpdir(), "omnibatch-lockpaths-"));
  const path = join(dir, "m.lock.json");
  await writeFile(path, encodeLockFile(NAME, new Map([[taskId(2), downloaded(2, { dir: "/tmp/elsewhere" })]])));
  const error = await readLockFile(path).then(() => undefined, (e: unknown) => e);
  assert.instance(error, LockfileInvalid);
  assert.match((error as LockfileInvalid).message, `lockfile ${path} is damaged`);
  assert.match((error as LockfileInvalid).message, `line 3: task ${taskId(2)}: its folder ("dir") "/tmp/elsewhere" is an absolute path`);
  const v1 = JSON.stringify({ lockfile_version: 1, name: NAME, tasks: { [taskId(2)]: downloaded(2, { dir: "job/../../up" }) } }, null, 2);
  await writeFile(path, v1);
  const old = await readLockFile(path).then(() => undefined, (e: unknown) => e);
  assert.instance(old, LockfileInvalid);
  assert.match((old as LockfileInvalid).message, `task ${taskId(2)}: its folder ("dir") "job/../../up" climbs out`);
});

test("a journal line whose dir climbs out is damage, named by its line in the journal", () => {
  const file = encodeLockFile(NAME, new Map([[taskId(2), downloaded(2)]]));
  const journal = encodeJournalHeader(NAME, sha256Hex(file)) + encodeJournalRecord(NAME, taskId(4), downloaded(4, { dir: "../x" }));
  const state = parseLockState("/m.lock.json", { file: { text: file }, journal });
  assert.instance(state, LockfileInvalid);
  assert.match((state as LockfileInvalid).message, `/m.lock.json.journal is damaged: journal line 2 (task ${taskId(4)}): its folder ("dir") "../x" climbs out`);
});

test.run();
