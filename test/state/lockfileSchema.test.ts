import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Effect, Layer } from "effect";
import { LockStore } from "../../src/state/LockStore.js";
import { lockFileProblems } from "../../src/state/validateLockFile.js";
import { encodeLockFile, parseLockFileText } from "../../src/state/LockfileText.js";
import type { LockFile } from "../../src/state/LockFile.js";
import { task, taskId } from "./lockTask.js";

const schema = JSON.parse(readFileSync(new URL("../../schemas/lockfile.schema.json", import.meta.url), "utf8"));

test("every property in the lockfile schema has a description", () => {
  const missing: string[] = [];
  const walk = (node: unknown, path: string) => {
    if (node === null || typeof node !== "object") return;
    const n = node as Record<string, unknown>;
    if (n.properties && typeof n.properties === "object") {
      for (const [key, value] of Object.entries(n.properties as Record<string, Record<string, unknown>>)) {
        if (typeof value.description !== "string" || value.description === "") missing.push(`${path}/properties/${key}`);
      }
    }
    for (const [key, value] of Object.entries(n)) walk(value, `${path}/${key}`);
  };
  walk(schema, "#");
  assert.equal(missing, []);
  assert.is(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
});

test("a lockfile using every field of LockFile.ts is valid", () => {
  const full: LockFile = {
    lockfile_version: 1,
    name: "spring",
    tasks: {
      [taskId(1)]: task(1, {
        state: "downloaded",
        task_id: "t-1",
        submitted_at: 1,
        created_at: 2,
        finished_at: 3,
        upstream: { job: "keyframes", task: taskId(2), output: 0 },
        error: { code: 1302, message: "busy", at: 4 },
        billing: [
          { charge_type: "cash", cash_type: "test_balance", amount: "0.35", currency: "CNY", list_price: "0.50" },
          { charge_type: "unit", amount: "1", package_type: "audio" },
        ],
        outputs: [
          { type: "video", index: 0, variant: "main", path: "clips/a/0.mp4", size: 10, sha256: "0".repeat(64), remote_id: "o" },
          { type: "image", index: 1, variant: "watermark", path: "clips/a/1.png", group_id: "g", deleted_at: 1_790_000_000_000 },
          { type: "audio", index: 2, variant: "mp3" },
          { type: "voice", index: 3, variant: "meta", meta: { name: "Ann", owned_by: "svc" } },
        ],
      }),
    },
  };
  assert.equal(lockFileProblems(full), []);
});

test("wrong shapes are refused with the field named", () => {
  const bad = (t: unknown) => lockFileProblems({ lockfile_version: 1, name: "x", tasks: { a: t } }).join("; ");
  assert.match(bad({ ...task(1), billing: [{ charge_type: "cash", amount: "1,5" }] }), /\/tasks\/a\/billing\/0\/amount: must match pattern/);
  assert.match(bad({ ...task(1), outputs: [{ type: "gif", index: 0, variant: "main" }] }), /\/tasks\/a\/outputs\/0\/type: must be one of/);
  assert.match(bad({ ...task(1), surprise: true }), /\/tasks\/a: unknown property 'surprise'/);
  const { job: _job, ...noJob } = task(1);
  assert.match(bad(noJob), /\/tasks\/a: must have required property 'job'/);
});

test("the memory layer serves the same API without files", async () => {
  const initial: LockFile = { lockfile_version: 1, name: "spring", tasks: { [taskId(1)]: task(1) } };
  const program = Effect.gen(function* () {
    const store = yield* LockStore;
    yield* store.put(taskId(2), task(2));
    yield* store.flush;
    const all = yield* store.all;
    const snapshot = yield* store.snapshot;
    return { ids: [...all.keys()].sort(), text: encodeLockFile(snapshot.name, snapshot.tasks) };
  });
  const result = await Effect.runPromise(Effect.provide(program, LockStore.memory("spring", initial)));
  assert.equal(result.ids, [taskId(1), taskId(2)].sort());
  const parsed = parseLockFileText(result.text);
  assert.ok(typeof parsed !== "string", String(parsed));
  assert.ok(Layer.isLayer(LockStore.layer("/nonexistent/x.lock.json", "x")));
});

test.run();
