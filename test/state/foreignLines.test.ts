// Lines of another manifest in a lockfile (src/state/foreignLines.ts): found with their
// line numbers as the file is read (version 3 and version 1), kept among the tasks, never
// confused with the file's own lines; a line that names no job and whose id names none
// under the file's name cannot be read as anybody's task and is damage (its line named).

import { test } from "uvu";
import * as assert from "uvu/assert";
import { foreignLinesWarning, isForeign } from "../../src/state/foreignLines.js";
import type { LockTask } from "../../src/state/LockFile.js";
import { encodeLockFile, parseLockFileText, type ParsedLockFile } from "../../src/state/LockfileText.js";
import { taskId as makeId } from "../../src/manifest/TaskIdentity.js";
import { task } from "./lockTask.js";

const HASH = "0123456789abcdef".repeat(4);
const own = (job: string) => makeId("mine", job, HASH);

test("isForeign: an id made for this name and job is not foreign; another name, another job or another shape is", () => {
  assert.not.ok(isForeign("mine", own("stills"), "stills"));
  assert.not.ok(isForeign("mine", own("a-b"), "a-b"), "a job with a dash");
  assert.ok(isForeign("mine", makeId("other", "stills", HASH), "stills"));
  assert.ok(isForeign("mine", own("stills"), "clips"), "the line's job is not the one its id names");
  assert.ok(isForeign("mine-x", own("stills"), "stills"));
  assert.ok(isForeign("mine", "hand-made-id", "stills"));
  assert.not.ok(isForeign("mine", "mine-stills-a", "stills"), "a short hand-made id of this name and job");
  assert.ok(isForeign("mine", "mine-stills", "stills"));
});

test("a version-3 file: foreign lines are found with their line numbers and kept among the tasks", () => {
  const other = makeId("other", "stills", HASH);
  const tasks = new Map<string, LockTask>([
    [own("stills"), task(2, { job: "stills" })],
    [other, task(4, { job: "stills" })],
  ]);
  const parsed = parseLockFileText(encodeLockFile("mine", tasks)) as ParsedLockFile;
  assert.type(parsed, "object");
  assert.is(parsed.tasks.size, 2);
  const line = encodeLockFile("mine", tasks).split("\n").findIndex((l) => l.includes(other)) + 1;
  assert.equal(parsed.foreign, [{ line, id: other, job: "stills" }]);
  const warning = foreignLinesWarning("m.lock.json", "mine", parsed.foreign)!;
  assert.match(warning, `m.lock.json:${line}: task ${other} (job stills)`);
  assert.match(warning, "Kept as it is, never deleted; its charges count in this manifest's spend to date");
  const own2 = parseLockFileText(encodeLockFile("mine", new Map([[own("stills"), task(2, { job: "stills" })]]))) as ParsedLockFile;
  assert.is(own2.foreign, undefined, "no foreign line, no field");
  assert.is(foreignLinesWarning("m.lock.json", "mine", own2.foreign), undefined);
});

test("many foreign lines: five named, the rest counted", () => {
  const foreign = Array.from({ length: 7 }, (_, i) => ({ line: 3 + 2 * i, id: `other-${i}`, job: "stills" }));
  const warning = foreignLinesWarning("m.lock.json", "mine", foreign)!;
  assert.match(warning, "7 lines of another manifest");
  assert.match(warning, "m.lock.json:11: task other-4");
  assert.not.match(warning, "other-5 ");
  assert.match(warning, "; and 2 more");
});

test("a line copied from another lockfile without its job (its id named it there) is damage, its line named", () => {
  const other = makeId("other", "stills", HASH);
  const text = `${JSON.stringify({ lockfile_version: 3, name: "mine" })}\n\n${JSON.stringify({ id: other, kind: "image", at: [1], hash: "h" })}\n`;
  const parsed = parseLockFileText(text);
  assert.type(parsed, "string");
  assert.match(parsed as string, `line 3: task ${other}: the line names no "job" and its id is not 'mine-<job>-…'`);
});

test("a version-1 document: a task of another manifest is found, with the line its key is on", () => {
  const other = makeId("other", "stills", HASH);
  const doc = JSON.stringify({ lockfile_version: 1, name: "mine", tasks: { [own("stills")]: task(2, { job: "stills" }), [other]: task(4, { job: "stills" }) } }, null, 2);
  const parsed = parseLockFileText(doc) as ParsedLockFile;
  const line = doc.split("\n").findIndex((l) => l.includes(`"${other}":`)) + 1;
  assert.ok(line > 0);
  assert.equal(parsed.foreign, [{ line, id: other, job: "stills" }]);
});

test.run();
