// The task store without a server: ids resolve without an index (by their epoch and
// sequence number), external ids keep every task made under "create-second", and the
// charges and image requests equal tasks share never cross a billing change.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { defaultEmulatorConfig, mergeConfig, type EmulatorConfig } from "../../src/emulator/EmulatorConfig.js";
import { formatDecimal } from "../../src/emulator/Decimal.js";
import { TaskStore, type NewTask } from "../../src/emulator/TaskStore.js";

const image = (externalId?: string, prompt = "a still"): NewTask => ({
  kind: "image",
  prompt,
  watermark: false,
  image: { modelName: "kling-image-o1", resolution: "1k", resultType: "single", count: 1, autoCount: false, aspectRatio: "1:1" },
  ...(externalId !== undefined ? { externalId } : {}),
});

const storeWith = (patch: object): { store: TaskStore; set: (p: object) => void } => {
  let config: EmulatorConfig = mergeConfig(defaultEmulatorConfig, patch as never);
  return { store: new TaskStore(() => config), set: (p) => (config = mergeConfig(config, p as never)) };
};

const created = (store: TaskStore, req: NewTask, now = 1_000) => {
  const r = store.create(req, now);
  if (r.kind !== "created") throw new Error(`not created: ${JSON.stringify(r)}`);
  return r.task;
};

test("get: every task by its id; malformed ids, ids past the last task and ids of before a reset find nothing", () => {
  const { store } = storeWith({ slots: { image: 1000 } });
  const tasks = Array.from({ length: 30 }, () => created(store, image()));
  for (const t of tasks) assert.is(store.get(t.id), t);
  const last = tasks[29]!.id;
  const next = `${last.slice(0, 4)}${String(31).padStart(12, "0")}`;
  for (const bad of [next, `${last.slice(0, 4)}${"0".repeat(12)}`, `${last} `, last.slice(1), `8${last.slice(1)}`, "7abc000000000001", "", "x".repeat(16)]) {
    assert.is(store.get(bad), undefined, bad);
  }
  store.reset();
  assert.is(store.get(tasks[0]!.id), undefined, "the old epoch's id");
  const again = created(store, image());
  assert.is.not(again.id, tasks[0]!.id);
  assert.is(store.get(again.id), again);
});

test("create-second: every task under one external id, oldest first, counted per id; refused duplicates count nothing", () => {
  const { store, set } = storeWith({ slots: { image: 1000 }, faults: { duplicateExternalId: "create-second" } });
  const a1 = created(store, image("a"));
  const b1 = created(store, image("b"));
  const a2 = created(store, image("a"));
  const a3 = created(store, image("a"));
  assert.equal(store.allByExternal("a"), [a1, a2, a3]);
  assert.equal(store.allByExternal("b"), [b1]);
  assert.equal(store.allByExternal("c"), []);
  assert.is(store.getByExternal("a"), a1);
  set({ faults: { duplicateExternalId: "reject" } });
  assert.is(store.create(image("b"), 1_000).kind, "refused");
  assert.equal(store.createsByExternal(), { a: 3, b: 1 });
  store.reset();
  assert.equal(store.createsByExternal(), {});
  assert.equal(store.allByExternal("a"), []);
});

test("a billing change between two creates: the later task has the new price, the earlier keeps its own", () => {
  const { store, set } = storeWith({ slots: { image: 1000 } });
  const before = created(store, image());
  const same = created(store, image());
  assert.is(same.charge, before.charge, "equal tasks share one charge");
  set({ billing: { prices: { overrides: { "image/1k": "5" } } } });
  const after = created(store, image());
  assert.is(formatDecimal(after.charge.listMicros), "5");
  assert.is.not(formatDecimal(before.charge.listMicros), "5");
  assert.is(before.image, same.image, "equal image requests share one object");
});

test.run();
