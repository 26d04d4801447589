// The emulated account as it can be kept between processes: its tasks (what was asked,
// when each moves on, how it ends, what it costs), where its id sequence and random draws
// are, and its clock. `run --emulate` keeps it beside the emulated lockfile so the next
// emulated run finds the tasks (and results) of the one before. Result files are not
// kept: the emulator draws them again from the task (ResultFiles.ts).
//
// Pure: text in, text out. The text is read as untrusted input (a file anyone can edit):
// every field is checked and a problem is named, never thrown.

import type { Charge } from "./Pricing.js";
import { THUMB_SIDE, type Thumbnail } from "./ReferenceImage.js";
import type { SavedTasks } from "./TaskStore.js";
import { emulatorTaskId, type ImageRequest, type Task, type VideoRequest } from "./Task.js";

export const EMULATOR_STATE_FORMAT = "omnibatch-emulator-state";
export const EMULATOR_STATE_VERSION = 1;

export interface EmulatorState {
  /** EmulatorClock.saved(): the offset from wall time (moved forward by advanceClock) and the latest time given. */
  readonly clock: { readonly offsetMs: number; readonly lastMs: number };
  readonly store: SavedTasks;
}

export type DecodedState = { readonly ok: true; readonly state: EmulatorState } | { readonly ok: false; readonly problem: string };

/** The epoch an emulator task id was made in, or undefined for another id. */
export const epochOfTaskId = (id: string): number | undefined => (/^7\d{15}$/.test(id) ? Number(id.slice(1, 4)) : undefined);

const chargeOut = (c: Charge) => ({
  mode: c.mode,
  cash_type: c.cashType,
  currency: c.currency,
  package_type: c.packageType,
  list: c.listMicros.toString(),
  amount: c.amountMicros.toString(),
  unit: c.unitMicros.toString(),
});

const taskOut = (t: Task, thumbs: Map<string, Thumbnail>) => {
  if (t.reference) thumbs.set(t.reference.key, t.reference);
  // The callback address is left out: it was a listener of the run that created the task.
  return {
    kind: t.kind,
    ...(t.externalId !== undefined ? { external_id: t.externalId } : {}),
    watermark: t.watermark,
    times: [t.createdAt, t.processingAt, t.endAt],
    outcome: t.outcome,
    ...(t.failMessage !== "" ? { fail_message: t.failMessage } : {}),
    slots: t.slots,
    charge: chargeOut(t.charge),
    ...(t.video ? { video: t.video } : {}),
    ...(t.image ? { image: t.image } : {}),
    ...(t.caption !== undefined ? { caption: t.caption } : {}),
    ...(t.reference ? { reference: t.reference.key } : {}),
  };
};

/** The state as text (JSON), each task on a line of its own. */
export const encodeEmulatorState = (state: EmulatorState): string => {
  const thumbs = new Map<string, Thumbnail>();
  const tasks = state.store.tasks.map((t) => JSON.stringify(taskOut(t, thumbs)));
  const thumbnails = [...thumbs.values()].map((t) => JSON.stringify({ key: t.key, width: t.width, height: t.height, rgb: Buffer.from(t.rgb).toString("base64") }));
  const head = JSON.stringify({
    format: EMULATOR_STATE_FORMAT,
    version: EMULATOR_STATE_VERSION,
    clock: { offset_ms: state.clock.offsetMs, last_ms: state.clock.lastMs },
    epoch: state.store.epoch,
    prng: state.store.prng,
  }).slice(0, -1);
  const list = (items: string[]) => (items.length === 0 ? "[]" : `[\n${items.join(",\n")}\n]`);
  return `${head},\n"thumbnails": ${list(thumbnails)},\n"tasks": ${list(tasks)}\n}\n`;
};

class Bad extends Error {}

const fail = (at: string, what: string): never => {
  throw new Bad(`${at}: ${what}`);
};

type Obj = Record<string, unknown>;

const obj = (v: unknown, at: string): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : fail(at, "must be an object"));

const onlyKeys = (o: Obj, at: string, allowed: readonly string[]): void => {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) fail(`${at}.${k}`, "is not a field of the emulator's state");
};

const int = (v: unknown, at: string, min: number, max: number): number =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max ? v : fail(at, `must be a whole number from ${min} to ${max}`);

const str = (v: unknown, at: string, max: number): string => (typeof v === "string" && v.length <= max ? v : fail(at, `must be a string of at most ${max} characters`));

const oneOf = <T extends string>(v: unknown, at: string, values: readonly T[]): T =>
  typeof v === "string" && (values as readonly string[]).includes(v) ? (v as T) : fail(at, `must be one of ${values.join(", ")}`);

const bool = (v: unknown, at: string): boolean => (typeof v === "boolean" ? v : fail(at, "must be true or false"));

const micros = (v: unknown, at: string): bigint => (typeof v === "string" && /^\d{1,30}$/.test(v) ? BigInt(v) : fail(at, "must be a whole number of micro-units, as a string"));

/** Times are Unix ms up to the end of year 9999. */
const MAX_TIME = 253_402_300_799_999;

const chargeIn = (v: unknown, at: string): Charge => {
  const o = obj(v, at);
  onlyKeys(o, at, ["mode", "cash_type", "currency", "package_type", "list", "amount", "unit"]);
  return {
    mode: oneOf(o["mode"], `${at}.mode`, ["cash", "unit"]),
    cashType: oneOf(o["cash_type"], `${at}.cash_type`, ["balance", "test_balance"]),
    currency: oneOf(o["currency"], `${at}.currency`, ["USD", "CNY"]),
    packageType: oneOf(o["package_type"], `${at}.package_type`, ["video", "image"]),
    listMicros: micros(o["list"], `${at}.list`),
    amountMicros: micros(o["amount"], `${at}.amount`),
    unitMicros: micros(o["unit"], `${at}.unit`),
  };
};

const videoIn = (v: unknown, at: string): VideoRequest => {
  const o = obj(v, at);
  onlyKeys(o, at, ["resolution", "aspectRatio", "durationSec", "audio"]);
  return {
    resolution: oneOf(o["resolution"], `${at}.resolution`, ["720p", "1080p"]),
    aspectRatio: oneOf(o["aspectRatio"], `${at}.aspectRatio`, ["16:9", "9:16", "1:1"]),
    durationSec: int(o["durationSec"], `${at}.durationSec`, 1, 3600),
    audio: oneOf(o["audio"], `${at}.audio`, ["original", "off"]),
  };
};

const imageIn = (v: unknown, at: string): ImageRequest => {
  const o = obj(v, at);
  onlyKeys(o, at, ["modelName", "resolution", "resultType", "count", "autoCount", "aspectRatio"]);
  return {
    modelName: str(o["modelName"], `${at}.modelName`, 100),
    resolution: oneOf(o["resolution"], `${at}.resolution`, ["1k", "2k", "4k"]),
    resultType: oneOf(o["resultType"], `${at}.resultType`, ["single", "series"]),
    count: int(o["count"], `${at}.count`, 1, 99),
    autoCount: bool(o["autoCount"], `${at}.autoCount`),
    aspectRatio: str(o["aspectRatio"], `${at}.aspectRatio`, 20),
  };
};

const thumbIn = (v: unknown, at: string): Thumbnail => {
  const o = obj(v, at);
  onlyKeys(o, at, ["key", "width", "height", "rgb"]);
  const key = str(o["key"], `${at}.key`, 64);
  const width = int(o["width"], `${at}.width`, 1, THUMB_SIDE);
  const height = int(o["height"], `${at}.height`, 1, THUMB_SIDE);
  const b64 = str(o["rgb"], `${at}.rgb`, 4 * THUMB_SIDE * THUMB_SIDE * 3);
  const rgb = Buffer.from(b64, "base64");
  if (rgb.length !== width * height * 3) fail(`${at}.rgb`, `must hold ${width * height * 3} bytes (width x height x 3), holds ${rgb.length}`);
  return { key, width, height, rgb: new Uint8Array(rgb) };
};

const taskIn = (v: unknown, at: string, seq: number, epoch: number, thumbs: ReadonlyMap<string, Thumbnail>, after: number): Task => {
  const o = obj(v, at);
  onlyKeys(o, at, ["kind", "external_id", "watermark", "times", "outcome", "fail_message", "slots", "charge", "video", "image", "caption", "reference"]);
  const kind = oneOf(o["kind"], `${at}.kind`, ["video", "image"]);
  const times = Array.isArray(o["times"]) && o["times"].length === 3 ? o["times"] : fail(`${at}.times`, "must be [created, processing, end] in Unix ms");
  const createdAt = int(times[0], `${at}.times[0]`, after, MAX_TIME);
  const processingAt = int(times[1], `${at}.times[1]`, createdAt, MAX_TIME);
  const endAt = int(times[2], `${at}.times[2]`, processingAt, MAX_TIME);
  const video = o["video"] === undefined ? undefined : videoIn(o["video"], `${at}.video`);
  const image = o["image"] === undefined ? undefined : imageIn(o["image"], `${at}.image`);
  if (kind === "video" && (video === undefined || image !== undefined)) fail(at, "a video task has `video` and no `image`");
  if (kind === "image" && (image === undefined || video !== undefined)) fail(at, "an image task has `image` and no `video`");
  const slots = int(o["slots"], `${at}.slots`, 1, 99);
  if (slots !== (kind === "video" ? 1 : image!.count)) fail(`${at}.slots`, "must be 1 for a video, the image count for an image task");
  const ref = o["reference"] === undefined ? undefined : str(o["reference"], `${at}.reference`, 64);
  const reference = ref === undefined ? undefined : (thumbs.get(ref) ?? fail(`${at}.reference`, "names no thumbnail of this file"));
  const externalId = o["external_id"] === undefined ? undefined : str(o["external_id"], `${at}.external_id`, 200);
  const caption = o["caption"] === undefined ? undefined : str(o["caption"], `${at}.caption`, 200);
  return {
    seq,
    id: emulatorTaskId(epoch, seq),
    kind,
    ...(externalId !== undefined ? { externalId } : {}),
    watermark: bool(o["watermark"], `${at}.watermark`),
    createdAt,
    processingAt,
    endAt,
    outcome: oneOf(o["outcome"], `${at}.outcome`, ["succeeded", "failed"]),
    failMessage: o["fail_message"] === undefined ? "" : str(o["fail_message"], `${at}.fail_message`, 2000),
    slots,
    charge: chargeIn(o["charge"], `${at}.charge`),
    ...(video ? { video } : {}),
    ...(image ? { image } : {}),
    ...(caption !== undefined ? { caption } : {}),
    ...(reference ? { reference } : {}),
  };
};

/** The state a text holds, or what is wrong with it (the first problem, with where). */
export const decodeEmulatorState = (text: string): DecodedState => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, problem: `not valid JSON (${(e as Error).message.slice(0, 120)})` };
  }
  try {
    const o = obj(parsed, "the file");
    if (o["format"] !== EMULATOR_STATE_FORMAT) fail("format", `must be "${EMULATOR_STATE_FORMAT}"`);
    if (o["version"] !== EMULATOR_STATE_VERSION) fail("version", `is ${JSON.stringify(o["version"])}; this omnibatch reads version ${EMULATOR_STATE_VERSION}`);
    onlyKeys(o, "the file", ["format", "version", "clock", "epoch", "prng", "thumbnails", "tasks"]);
    const c = obj(o["clock"], "clock");
    onlyKeys(c, "clock", ["offset_ms", "last_ms"]);
    const clock = { offsetMs: int(c["offset_ms"], "clock.offset_ms", -MAX_TIME, MAX_TIME), lastMs: int(c["last_ms"], "clock.last_ms", 0, MAX_TIME) };
    const epoch = int(o["epoch"], "epoch", 0, 999);
    const prng = int(o["prng"], "prng", 0, 0xffffffff);
    const thumbList = Array.isArray(o["thumbnails"]) ? o["thumbnails"] : fail("thumbnails", "must be a list");
    const thumbs = new Map<string, Thumbnail>();
    thumbList.forEach((t, i) => {
      const thumb = thumbIn(t, `thumbnails[${i}]`);
      thumbs.set(thumb.key, thumb);
    });
    const list = Array.isArray(o["tasks"]) ? o["tasks"] : fail("tasks", "must be a list");
    if (list.length > 1e12 - 1) fail("tasks", "holds more tasks than ids can number");
    const tasks: Task[] = [];
    let after = 0;
    for (let i = 0; i < list.length; i++) {
      const task = taskIn(list[i], `tasks[${i}]`, i + 1, epoch, thumbs, after);
      after = task.createdAt;
      tasks.push(task);
    }
    if (tasks.length > 0 && clock.lastMs < tasks.at(-1)!.createdAt) fail("clock.last_ms", "is before the last task's creation");
    return { ok: true, state: { clock, store: { epoch, prng, tasks } } };
  } catch (e) {
    if (e instanceof Bad) return { ok: false, problem: e.message };
    throw e;
  }
};
