// The quick check of the usual task line (src/state/taskLineCheck.ts) against the
// lockfile schema, which stays the authority: the quick check never accepts a line the
// schema refuses, and on lines of the usual fields it says exactly what the schema says,
// on generated lines and on thousands of damaged copies of them. A damaged lockfile is
// still explained in the schema's words, with its line.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseLockFileText, encodeHeader } from "../../src/state/LockfileText.js";
import { encodeTaskLine } from "../../src/state/TaskLine.js";
import { isPlainTaskLine } from "../../src/state/taskLineCheck.js";
import { lockSchemaProblems } from "../../src/state/validateLockFile.js";
import { randomTask, rng } from "./randomTask.js";

type Data = Record<string, unknown>;

const schemaAccepts = (data: unknown): boolean => lockSchemaProblems("taskLine", data).length === 0;

const USUAL_LINE = new Set(["id", "job", "kind", "state", "take", "attempt", "task_id", "at", "hash", "hash_rest", "dir", "vars", "out", "bill", "superseded_by", "pruned_at"]);
/** Only fields the quick check knows (anything else it leaves to the schema). */
const usualFields = (data: unknown): boolean =>
  data !== null &&
  typeof data === "object" &&
  !Array.isArray(data) &&
  Object.keys(data).every((k) => USUAL_LINE.has(k)) &&
  (!Array.isArray((data as Data).out) || ((data as Data).out as unknown[]).every((o) => o === null || typeof o !== "object" || !("meta" in o)));

/** Holds the two to agreement on one line; returns what the schema said. */
const agree = (data: unknown, what: string): boolean => {
  const quick = isPlainTaskLine(data);
  const schema = schemaAccepts(data);
  if (quick && !schema) assert.unreachable(`the quick check accepted a line the schema refuses (${what}): ${JSON.stringify(data)}`);
  if (usualFields(data) && quick !== schema) assert.unreachable(`the quick check and the schema differ on a line of usual fields (${what}): ${JSON.stringify(data)}`);
  return schema;
};

const generatedLines = (count: number): Data[] => {
  const r = rng(11);
  return Array.from({ length: count }, (_, n) => {
    const { id, task } = randomTask(r, "spring", n);
    return JSON.parse(encodeTaskLine("spring", id, task)) as Data;
  });
};

test("on 2,000 generated lines the quick check accepts every line of usual fields and no line the schema refuses", () => {
  let quick = 0;
  let usual = 0;
  for (const data of generatedLines(2000)) {
    assert.ok(agree(data, "generated"), "a generated line matches the schema");
    if (usualFields(data)) usual++;
    if (isPlainTaskLine(data)) quick++;
  }
  // Both kinds are exercised: most lines are of usual fields (decided quickly), some are not.
  assert.ok(usual > 1000 && usual < 2000, `${usual} lines of usual fields`);
  assert.is(quick, usual);
});

// Values put in place of each field of a line: every JSON type, edge numbers, strings near each pattern.
const HOSTILE: unknown[] = [
  null, true, 0, -1, 1.5, -0.5, 2 ** 53, 1e21, "", "x", "0", "-1", "1.", ".5", "1.50", "-0.024", "1e3", " 1", "image", "video", "audio",
  "downloaded", "DOWNLOADED", "main", "meta", "balance", "USD", "usd", "a".repeat(64), "A".repeat(64), "a".repeat(63), "g".repeat(64),
  "!#~", "a\"b", "123456789", "é", [], [1], [null], [1, null, 2, null, 3], [1, 2, 3, 4, 5, 6], [-1], [1.5], {}, { a: 1 },
];

/** A copy of `data` with the value at `path` replaced (or removed: `undefined`). */
const withValue = (data: Data, path: readonly (string | number)[], value: unknown): Data => {
  const copy = structuredClone(data);
  let at: Record<string | number, unknown> = copy;
  for (const p of path.slice(0, -1)) {
    const next = at[p];
    if (next === null || typeof next !== "object") return copy;
    at = next as Record<string | number, unknown>;
  }
  const last = path[path.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(at)) at.splice(last as number, 1);
    else delete at[last];
  } else at[last] = value;
  return copy;
};

const PATHS: (string | number)[][] = [
  ...["id", "job", "kind", "state", "take", "attempt", "task_id", "at", "hash", "hash_rest", "dir", "vars", "out", "bill", "superseded_by", "pruned_at", "unknown", "error", "meta"].map((k) => [k]),
  ["at", 0], ["at", 1], ["at", 4], ["at", 5], ["out", 0], ["out", 1], ["bill", 0],
  ...["type", "index", "variant", "file", "path", "size", "sha256", "remote_id", "group_id", "deleted_at", "etag", "meta", "other"].map((k) => ["out", 0, k]),
  ...["cash", "unit", "list", "cash_type", "currency", "package_type", "amount"].map((k) => ["bill", 0, k]),
];

test("on damaged copies of generated lines (every field replaced by hostile values or removed) the quick check never accepts what the schema refuses", () => {
  let refused = 0;
  let accepted = 0;
  for (const data of generatedLines(60)) {
    for (const path of PATHS) {
      for (const value of [undefined, ...HOSTILE]) {
        if (agree(withValue(data, path, value), `${path.join(".")} = ${JSON.stringify(value)}`)) accepted++;
        else refused++;
      }
    }
  }
  // Not vacuous: plenty of both.
  assert.ok(refused > 10_000, `${refused} damaged copies refused`);
  assert.ok(accepted > 5_000, `${accepted} still valid`);
});

test("lines breaking one rule each are refused by both: both hashes, no hash, file and path, two amounts, a bad digest, too many times", () => {
  const base: Data = { id: "spring-stills-aaaaaaaaaaaaaaaaaaaa", kind: "image", at: [1, 2], hash: "abc", out: [{ file: "x.png", size: 1, sha256: "0".repeat(64) }], bill: [{ cash: "0.024" }] };
  assert.ok(isPlainTaskLine(base) && schemaAccepts(base), "the base line is valid");
  const broken: Data[] = [
    { ...base, hash_rest: "def" },
    withValue(base, ["hash"], undefined),
    withValue(base, ["id"], undefined),
    withValue(base, ["kind"], undefined),
    withValue(base, ["at"], undefined),
    withValue(base, ["out", 0, "path"], "p/x.png"),
    withValue(base, ["bill", 0, "unit"], "2"),
    withValue(base, ["bill", 0], {}),
    withValue(base, ["out", 0, "sha256"], "0".repeat(63) + "G"),
    withValue(base, ["at"], [1, 2, 3, 4, 5, 6]),
    withValue(base, ["at"], []),
    withValue(base, ["at"], [-1]),
    withValue(base, ["out", 0, "file"], ""),
    withValue(base, ["out", 0, "etag"], "a b"),
    withValue(base, ["bill", 0, "cash"], "1."),
    { ...base, extra: 1 },
  ];
  for (const data of broken) {
    assert.not.ok(isPlainTaskLine(data), JSON.stringify(data));
    assert.not.ok(schemaAccepts(data), JSON.stringify(data));
  }
});

test("a damaged line of a large file is still named by its number, in the schema's words", () => {
  const ids = new Set<unknown>();
  // One line per id (the generator repeats some ids).
  const lines = generatedLines(400).filter((d) => usualFields(d) && !ids.has(d.id) && ids.add(d.id));
  assert.ok(lines.length > 41, `${lines.length} lines`);
  const bad = withValue(lines[40]!, ["out"], [{ sha256: "not-a-digest" }]);
  const text = [encodeHeader("spring"), ...[...lines.slice(0, 40), bad, ...lines.slice(41)].map((d) => `\n${JSON.stringify(d)}`)].join("\n") + "\n";
  const parsed = parseLockFileText(text);
  assert.type(parsed, "string");
  // Line 1 is the header; each task line follows a blank line: the 41st task is on line 83.
  assert.match(parsed as string, /line 83: task [a-z0-9_-]+: \/out\/0\/sha256: must match pattern "\^\[0-9a-f\]\{64\}\$"/);
});

test.run();
