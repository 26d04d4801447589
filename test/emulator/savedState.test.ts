// The emulated account saved by one emulator and taken up by another (as `run --emulate`
// keeps it between runs): the second answers for the first one's tasks with the same
// states and the same result bytes, goes on with their ids, slots and clock, and the
// saved text is read as untrusted input (a damaged one is named, never thrown).

import { test } from "uvu";
import * as assert from "uvu/assert";
import { decodeEmulatorState, encodeEmulatorState, type EmulatorState } from "../../src/emulator/EmulatorState.js";
import type { RunningEmulator } from "../../src/emulator/Emulator.js";
import { Client, fixture, imageBody, start, videoBody } from "./harness.js";

const DAY = 86_400_000;
const config = { slots: { video: 2, image: 10 } };

const download = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
};

/** Saved, written as text and read back, as between two runs. */
const carried = (emu: RunningEmulator): EmulatorState => {
  const decoded = decodeEmulatorState(encodeEmulatorState(emu.saveState()));
  if (!decoded.ok) throw new Error(decoded.problem);
  return decoded.state;
};

test("a restored emulator answers for the saved one's tasks: states, the same result bytes, ids and external ids that go on, slots held", async () => {
  const a = await start(config);
  const ca = new Client(a);
  const png = fixture("img_300x300.png").toString("base64");
  const withRef = (await ca.createImage(imageBody({ prompt: "a mug like <<<image_1>>>", n: 2, external_task_id: "x-ref", image_list: [{ image: png }] }))).body.data.task_id as string;
  const plain = (await ca.createImage(imageBody({ external_task_id: "x-plain" }))).body.data.task_id as string;
  const video = (await ca.createVideo(videoBody({ external: "x-video" }))).body.data.id as string;
  a.advanceClock(30_000);
  const imgA = (await ca.get(`/v1/images/omni-image/${withRef}`)).body.data;
  assert.is(imgA.task_status, "succeed");
  const bytesA = await Promise.all(imgA.task_result.images.map((i: { url: string }) => download(i.url)));
  const plainA = (await ca.get(`/v1/images/omni-image/${plain}`)).body.data;
  const videoA = (await ca.get(`/tasks?task_ids=${video}`)).body.data[0];
  assert.is(videoA.status, "processing");
  const state = carried(a);
  const nowA = a.now();
  await a.close();

  const b = await start(config);
  try {
    b.restoreState(state);
    assert.ok(b.now() >= nowA, "the clock never goes back");
    const cb = new Client(b);
    const imgB = (await cb.get(`/v1/images/omni-image/${withRef}`)).body.data;
    assert.is(imgB.task_status, "succeed");
    assert.equal(imgB.task_info, imgA.task_info);
    assert.equal(imgB.final_unit_deduction, imgA.final_unit_deduction);
    assert.is(imgB.task_result.images.length, 2);
    const bytesB = await Promise.all(imgB.task_result.images.map((i: { url: string }) => download(i.url)));
    for (let i = 0; i < 2; i++) {
      assert.is(bytesB[i]!.status, 200);
      assert.ok(bytesB[i]!.bytes.equals(bytesA[i]!.bytes), `image ${i} is the same file (drawn over the same reference)`);
    }
    assert.equal((await cb.get(`/v1/images/omni-image/${plain}`)).body.data.task_result.images.length, plainA.task_result.images.length);
    // The video in flight goes on by the same schedule, and holds its slot meanwhile.
    assert.is((await cb.get(`/tasks?task_ids=${video}`)).body.data[0].status, "processing");
    assert.is(b.stats().slots.video.inUse, 1);
    b.advanceClock(60_000);
    const videoB = (await cb.get(`/tasks?task_ids=${video}`)).body.data[0];
    assert.is(videoB.status, "succeeded");
    assert.is((await download(videoB.outputs[0].url)).status, 200);
    assert.is(b.stats().slots.video.inUse, 0);
    // Its ids go on after the saved ones; an external id used before is still taken.
    const next = (await cb.createImage(imageBody())).body.data.task_id as string;
    assert.is(Number(next.slice(4)), 4);
    assert.is(next.slice(0, 4), withRef.slice(0, 4));
    const again = await cb.createImage(imageBody({ external_task_id: "x-plain" }));
    assert.is(again.body.code, 1201, "an external id the saved account used is taken");
    assert.is((await cb.createImage(imageBody({ external_task_id: "x-new" }))).body.code, 0, "a new one is not");
    assert.is(b.stats().tasks.total, 5);
  } finally {
    await b.close();
  }
});

test("the clock is kept: results 30 days old by a moved clock stay deleted after the restore", async () => {
  const a = await start(config);
  const ca = new Client(a);
  const id = (await ca.createImage(imageBody())).body.data.task_id as string;
  a.advanceClock(30_000);
  assert.is((await download((await ca.get(`/v1/images/omni-image/${id}`)).body.data.task_result.images[0].url)).status, 200);
  a.advanceClock(31 * DAY);
  const state = carried(a);
  await a.close();
  const b = await start(config);
  try {
    b.restoreState(state);
    assert.ok(b.now() - Date.now() > 30 * DAY, "the emulated clock is still 31 days ahead");
    const after = (await new Client(b).get(`/v1/images/omni-image/${id}`)).body.data;
    assert.is(after.task_status, "succeed");
    assert.equal(after.task_result.images, []);
  } finally {
    await b.close();
  }
  // The same state with the clock moved a minute only: the result is still there.
  const c = await start(config);
  try {
    c.restoreState({ ...state, clock: { offsetMs: 60_000, lastMs: 0 } });
    assert.is((await new Client(c).get(`/v1/images/omni-image/${id}`)).body.data.task_result.images.length, 1);
  } finally {
    await c.close();
  }
});

test("restoreState refuses an emulator that already holds tasks", async () => {
  const a = await start(config);
  try {
    const state = carried(a);
    await new Client(a).createImage(imageBody());
    assert.throws(() => a.restoreState(state), /already holds tasks/);
  } finally {
    await a.close();
  }
});

test("a damaged state is named (field and why), never thrown: edits, truncations and flipped bytes", async () => {
  const a = await start(config);
  const ca = new Client(a);
  await ca.createImage(imageBody({ image_list: [{ image: fixture("img_300x300.png").toString("base64") }], prompt: "like <<<image_1>>>" }));
  await ca.createVideo(videoBody());
  a.advanceClock(1_000);
  const text = encodeEmulatorState(a.saveState());
  await a.close();
  assert.ok(decodeEmulatorState(text).ok);
  const edit = (f: (o: any) => void): string => {
    const o = JSON.parse(text);
    f(o);
    return JSON.stringify(o);
  };
  const cases: [string, string, RegExp][] = [
    ["not JSON", "{", /not valid JSON/],
    ["a list", "[]", /the file: must be an object/],
    ["another format", edit((o) => (o.format = "x")), /^format/],
    ["a newer version", edit((o) => (o.version = 2)), /^version: is 2/],
    ["an unknown field", edit((o) => (o.extra = 1)), /the file\.extra: is not a field/],
    ["an epoch out of range", edit((o) => (o.epoch = 1000)), /^epoch: must be a whole number/],
    ["a clock that is not a number", edit((o) => (o.clock.offset_ms = "1")), /^clock\.offset_ms/],
    ["times out of order", edit((o) => (o.tasks[1].times = [o.tasks[1].times[2], o.tasks[1].times[0], o.tasks[1].times[1]])), /^tasks\[1\]\.times\[1\]/],
    ["a task created before the one before it", edit((o) => (o.tasks[1].times[0] = 0)), /^tasks\[1\]\.times\[0\]/],
    ["an unknown kind", edit((o) => (o.tasks[0].kind = "audio")), /^tasks\[0\]\.kind/],
    ["a video with image settings", edit((o) => (o.tasks[1].image = o.tasks[0].image)), /^tasks\[1\]: a video task/],
    ["a charge in floating point", edit((o) => (o.tasks[0].charge.amount = "1e309")), /^tasks\[0\]\.charge\.amount/],
    ["slots that do not match the count", edit((o) => (o.tasks[0].slots = 7)), /^tasks\[0\]\.slots/],
    ["a thumbnail of the wrong size", edit((o) => (o.thumbnails[0].rgb = "AAAA")), /^thumbnails\[0\]\.rgb: must hold/],
    ["a reference to no thumbnail", edit((o) => (o.tasks[0].reference = "nope")), /^tasks\[0\]\.reference/],
    ["a clock behind its last task", edit((o) => (o.clock.last_ms = 1)), /^clock\.last_ms/],
    ["a huge count", edit((o) => (o.tasks[0].image.count = 1e9)), /^tasks\[0\]\.image\.count/],
  ];
  for (const [what, damaged, problem] of cases) {
    const r = decodeEmulatorState(damaged);
    assert.not.ok(r.ok, what);
    if (!r.ok) assert.match(r.problem, problem, `${what}: ${r.problem}`);
  }
  // Cut anywhere or with a byte changed anywhere: a problem or a state, never an exception.
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
  for (let i = 0; i < 400; i++) {
    const at = rand(text.length);
    const damaged = i % 2 === 0 ? text.slice(0, at) : `${text.slice(0, at)}${String.fromCharCode(32 + rand(90))}${text.slice(at + 1)}`;
    decodeEmulatorState(damaged);
  }
});

test.run();
