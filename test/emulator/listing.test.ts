// Queries and listings: A2 by ids, A3 cursor listing and B3 pages over 1,000+ tasks,
// each task exactly once with no gap, also while new tasks are being created.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Client, imageBody, start, videoBody } from "./harness.js";

const emu = await start({ slots: { video: 100_000, image: 100_000 } });
const c = new Client(emu);

const videoIds: string[] = [];
const imageIds: string[] = [];
const createVideos = async (n: number, prefix: string) => {
  for (let i = 0; i < n; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, (_, k) => c.createVideo(videoBody({ external: `${prefix}-${i + k}` }))),
    );
    for (const r of batch) {
      assert.is(r.body.code, 0);
      videoIds.push(r.body.data.id);
    }
  }
};
const createImages = async (n: number) => {
  for (let i = 0; i < n; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => c.createImage(imageBody())));
    for (const r of batch) {
      assert.is(r.body.code, 0);
      imageIds.push(r.body.data.task_id);
    }
  }
};

test.before(async () => {
  await createVideos(1100, "v");
  await createImages(1100);
});

test("A2 returns up to 20 tasks by task_ids in one call (20 ids in all, unknown ones counted), omitting unknown ids", async () => {
  const ids = videoIds.slice(0, 19);
  const r = await c.get(`/tasks?task_ids=${[...ids, "999999999"].join(",")}`);
  assert.is(r.body.code, 0);
  assert.equal(r.body.data.map((t: { id: string }) => t.id), ids);
});

test("A2 by external_task_ids finds the tasks and tolerates spaces after commas", async () => {
  const r = await c.get(`/tasks?external_task_ids=${encodeURIComponent("v-0, v-1,v-2")}`);
  assert.equal(r.body.data.map((t: { external_id: string }) => t.external_id), ["v-0", "v-1", "v-2"]);
});

test("A2 with only unknown ids answers code 0 and data []", async () => {
  const r = await c.get("/tasks?task_ids=1,2,3");
  assert.is(r.status, 200);
  assert.equal(r.body.data, []);
});

test("A2 with both task_ids and external_task_ids answers 400 code 1201", async () => {
  const r = await c.get(`/tasks?task_ids=${videoIds[0]}&external_task_ids=v-0`);
  assert.is(r.status, 400);
  assert.is(r.body.code, 1201);
  assert.match(r.body.message, "task_ids");
});

test("A2 with neither parameter answers 400 code 1201", async () => {
  const r = await c.get("/tasks");
  assert.is(r.status, 400);
  assert.is(r.body.code, 1201);
});

test("A2 accepts 20 ids and refuses 21 with the live service's 1201; 100 and 101 with maxQueryIds switched back", async () => {
  assert.is((await c.get(`/tasks?task_ids=${videoIds.slice(0, 20).join(",")}`)).body.data.length, 20);
  const r = await c.get(`/tasks?task_ids=${videoIds.slice(0, 21).join(",")}`);
  assert.is(r.status, 400);
  assert.equal([r.body.code, r.body.message], [1201, "task_ids and external_task_ids cannot exceed 20 in total"]);
  const byExternal = await c.get(`/tasks?external_task_ids=${Array.from({ length: 21 }, (_, i) => `v-${i}`).join(",")}`);
  assert.equal([byExternal.status, byExternal.body.code], [400, 1201]);
  emu.configure({ maxQueryIds: 100 });
  try {
    assert.is((await c.get(`/tasks?task_ids=${videoIds.slice(0, 100).join(",")}`)).body.data.length, 100);
    const over = await c.get(`/tasks?task_ids=${videoIds.slice(0, 101).join(",")}`);
    assert.is(over.status, 400);
    assert.is(over.body.code, 1201);
  } finally {
    emu.configure({ maxQueryIds: 20 });
  }
});

test("A2 shows image tasks in its own item shape (live); not with unifiedImages off", async () => {
  const [item] = (await c.get(`/tasks?task_ids=${imageIds[0]}`)).body.data as { id: string; status: string; outputs: unknown[]; billing: unknown[] }[];
  assert.is(item!.id, imageIds[0]);
  assert.ok(["submitted", "processing", "succeeded", "failed"].includes(item!.status), item!.status);
  assert.ok(Array.isArray(item!.outputs) && Array.isArray(item!.billing));
  emu.configure({ answers: { unifiedImages: false } });
  try {
    assert.equal((await c.get(`/tasks?task_ids=${imageIds[0]}`)).body.data, []);
  } finally {
    emu.configure({ answers: { unifiedImages: true } });
  }
});

test("A3 without a product_type filter lists every product's tasks (live); videos only with unifiedImages off", async () => {
  const count = async () => {
    let cursor = "";
    let n = 0;
    for (let pages = 0; pages < 20; pages++) {
      const d = (await c.post("/tasks", { cursor, limit: 500 })).body.data;
      n += d.result.length;
      if (!d.has_more) return n;
      cursor = d.next_cursor;
    }
    throw new Error("more than 20 pages");
  };
  assert.is(await count(), videoIds.length + imageIds.length);
  emu.configure({ answers: { unifiedImages: false } });
  try {
    assert.is(await count(), videoIds.length);
  } finally {
    emu.configure({ answers: { unifiedImages: true } });
  }
});

test("A3 cursor listing over 1,100 video tasks returns each exactly once, in creation order", async () => {
  const seen: string[] = [];
  let cursor = "";
  let pages = 0;
  for (;;) {
    const r = await c.post("/tasks", { cursor, limit: 100, filters: [{ key: "product_type", values: ["video"] }] });
    assert.is(r.body.code, 0);
    const d = r.body.data;
    assert.is(d.count, d.result.length);
    seen.push(...d.result.map((t: { id: string }) => t.id));
    pages += 1;
    if (!d.has_more) {
      assert.is(d.next_cursor, "");
      break;
    }
    assert.type(d.next_cursor, "string");
    cursor = d.next_cursor;
    assert.ok(pages < 50);
  }
  assert.is(pages, 11);
  assert.equal(seen, videoIds);
});

test("A3 cursor listing while new tasks are created returns every task of the window once, no gap", async () => {
  const before = [...videoIds];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let duplicates = 0;
  for (let page = 0; page < 100; page++) {
    const r = await c.post("/tasks", cursor ? { cursor, limit: 97 } : { limit: 97 });
    for (const t of r.body.data.result as Array<{ id: string }>) {
      if (seen.has(t.id)) duplicates += 1;
      seen.add(t.id);
    }
    await createVideos(13, `during-${page}`);
    if (!r.body.data.has_more) break;
    cursor = r.body.data.next_cursor;
  }
  assert.is(duplicates, 0);
  for (const id of before) assert.ok(seen.has(id), `missing ${id}`);
});

test("A3 limit 500 is accepted and 501 refused with 1201; limit defaults to 100", async () => {
  assert.is((await c.post("/tasks", { limit: 500 })).body.data.count, 500);
  const r = await c.post("/tasks", { limit: 501 });
  assert.is(r.status, 400);
  assert.is(r.body.code, 1201);
  assert.match(r.body.message, "limit");
  assert.is((await c.post("/tasks", {})).body.data.count, 100);
});

test("A3 accepts string timestamps and answers 1201 when start_time is not before end_time", async () => {
  const now = emu.now();
  const ok = await c.post("/tasks", { start_time: String(now - 3_600_000), end_time: String(now + 1000), limit: 5 });
  assert.is(ok.body.code, 0);
  assert.is(ok.body.data.count, 5);
  const same = await c.post("/tasks", { start_time: String(now), end_time: String(now) });
  assert.is(same.status, 400);
  assert.is(same.body.code, 1201);
  assert.match(same.body.message, "start_time");
});

test("A3 status filter returns only tasks in that status", async () => {
  emu.advanceClock(10_000);
  const fresh = (await c.createVideo(videoBody())).body.data.id;
  const r = await c.post("/tasks", { filters: [{ key: "status", values: ["submitted"] }], limit: 500 });
  assert.equal(r.body.data.result.map((t: { id: string }) => t.id), [fresh]);
  const p = await c.post("/tasks", { filters: [{ key: "status", values: ["processing"] }], limit: 10 });
  assert.ok(p.body.data.result.every((t: { status: string }) => t.status === "processing"));
  assert.is(p.body.data.count, 10);
});

test("A3 product_type image lists image tasks in the A2 item shape", async () => {
  const r = await c.post("/tasks", { filters: [{ key: "product_type", values: ["image"] }], limit: 3 });
  assert.equal(r.body.data.result.map((t: { id: string }) => t.id), imageIds.slice(0, 3));
  assert.ok(["submitted", "processing", "succeeded"].includes(r.body.data.result[0].status));
});

test("A3 paged by kind: image tasks alone, then both kinds, each task once in creation order", async () => {
  const page = async (kinds: string[]) => {
    const seen: string[] = [];
    let cursor = "";
    for (let pages = 0; pages < 20; pages++) {
      const r = await c.post("/tasks", { ...(cursor ? { cursor } : { filters: [{ key: "product_type", values: kinds }] }), limit: 500 });
      assert.is(r.body.code, 0);
      seen.push(...r.body.data.result.map((t: { id: string }) => t.id));
      if (!r.body.data.has_more) return seen;
      cursor = r.body.data.next_cursor;
    }
    throw new Error("more than 20 pages");
  };
  assert.equal(await page(["image"]), imageIds);
  const both = await page(["video", "image"]);
  // Earlier tests made a few tasks of their own: every listed task is listed once.
  assert.is(new Set(both).size, both.length);
  assert.equal(both.filter((id) => imageIds.includes(id)), imageIds);
  assert.equal(both.filter((id) => videoIds.includes(id)), videoIds);
  assert.equal(both, [...both].sort(), "ids follow creation order");
});

test("A3 default window is the last 30 days: older tasks drop out", async () => {
  const older = await start({ slots: { video: 10, image: 10 } });
  try {
    const cc = new Client(older);
    const old = (await cc.createVideo(videoBody())).body.data.id;
    older.advanceClock(31 * 86_400_000);
    const fresh = (await cc.createVideo(videoBody())).body.data.id;
    const r = await cc.post("/tasks", {});
    assert.equal(r.body.data.result.map((t: { id: string }) => t.id), [fresh]);
    const wide = await cc.post("/tasks", { start_time: 0, end_time: older.now() + 1 });
    assert.equal(wide.body.data.result.map((t: { id: string }) => t.id), [old, fresh]);
  } finally {
    await older.close();
  }
});

test("B3 lists image tasks newest first as a bare array; pageSize defaults to 30", async () => {
  const r = await c.get("/v1/images/omni-image");
  assert.ok(Array.isArray(r.body.data));
  assert.is(r.body.data.length, 30);
  assert.equal(r.body.data.map((t: { task_id: string }) => t.task_id), imageIds.slice(-30).reverse());
});

test("B3 paging over 1,100 image tasks returns each once with no gap", async () => {
  const seen: string[] = [];
  for (let page = 1; page <= 1000; page++) {
    const r = await c.get(`/v1/images/omni-image?pageNum=${page}&pageSize=100`);
    seen.push(...r.body.data.map((t: { task_id: string }) => t.task_id));
    if (r.body.data.length < 100) break;
  }
  assert.equal(seen, [...imageIds].reverse());
});

test("B3 paging while tasks are created: pages shift but never skip; deduping by task_id gives every task once", async () => {
  // New tasks enter page 1 and push older ones to later pages, so a forward-paging
  // client may see a task twice but never misses one: it keeps a set of task_ids.
  const before = new Set(imageIds);
  const seen = new Set<string>();
  let repeats = 0;
  for (let page = 1; page <= 1000; page++) {
    const r = await c.get(`/v1/images/omni-image?pageNum=${page}&pageSize=100`);
    for (const t of r.body.data as Array<{ task_id: string }>) {
      if (seen.has(t.task_id)) repeats += 1;
      seen.add(t.task_id);
    }
    if (r.body.data.length < 100) break;
    await createImages(7);
  }
  for (const id of before) assert.ok(seen.has(id), `missing ${id}`);
  assert.ok(repeats > 0, "new tasks shift later pages, so some repeat");
});

test("B3 pageSize 500 accepted, 501 and 0 refused; pageNum 1000 accepted (empty), 1001 and 0 refused", async () => {
  assert.is((await c.get("/v1/images/omni-image?pageNum=1&pageSize=500")).body.data.length, 500);
  for (const q of ["pageSize=501", "pageSize=0", "pageNum=1001", "pageNum=0"]) {
    const r = await c.get(`/v1/images/omni-image?${q}`);
    assert.is(r.status, 400, q);
    assert.is(r.body.code, 1201, q);
  }
  const last = await c.get("/v1/images/omni-image?pageNum=1000&pageSize=500");
  assert.is(last.body.code, 0);
  assert.equal(last.body.data, []);
});

test("B2 finds an image task by task id and by external_task_id; unknown answers 400 code 1201 (live), 404 code 1203 switched back", async () => {
  const made = (await c.createImage(imageBody({ external_task_id: "img-ext-1" }))).body.data;
  assert.equal(made.task_info, { external_task_id: "img-ext-1" });
  assert.is((await c.get(`/v1/images/omni-image/${made.task_id}`)).body.data.task_id, made.task_id);
  const byExt = await c.get("/v1/images/omni-image/img-ext-1");
  assert.is(byExt.body.data.task_id, made.task_id);
  assert.equal(byExt.body.data.task_info, { external_task_id: "img-ext-1" });
  const missing = await c.get("/v1/images/omni-image/123");
  assert.equal([missing.status, missing.body.code, missing.body.message], [400, 1201, "Task not found by id/external id: 123"]);
  const unknownExternal = await c.get("/v1/images/omni-image/img-ext-none");
  assert.equal([unknownExternal.status, unknownExternal.body.message], [400, "Task not found by id/external id: img-ext-none"]);
  emu.configure({ answers: { imageNotFound: "404-1203" } });
  try {
    const before = await c.get("/v1/images/omni-image/123");
    assert.is(before.status, 404);
    assert.is(before.body.code, 1203);
  } finally {
    emu.configure({ answers: { imageNotFound: "400-1201" } });
  }
});

test("B2 by external_task_id can be switched off", async () => {
  emu.configure({ faults: { imageQueryByExternalId: false } });
  try {
    assert.is((await c.get("/v1/images/omni-image/img-ext-1")).body.message, "Task not found by id/external id: img-ext-1");
  } finally {
    emu.configure({ faults: { imageQueryByExternalId: true } });
  }
});

test.after(() => emu.close());
test.run();
