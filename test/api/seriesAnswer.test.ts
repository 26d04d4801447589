// A series image task's answer, in each shape the client may meet: as the service's own
// example (the images in both `images` and `series_images`, `watermark_url` on every
// entry: the emulator's default), the emulator's older shape (only `series_images`,
// switchable with `seriesImagesAnswer: "series-images-only"`), and one with only
// `images`. The real client against the real emulator over loopback HTTP, then the one
// reading of an answer (src/protocol/TaskView.ts): each image once, watermarked copies
// only when asked for, and every link fetches its file.

import { Effect, Redacted } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { OmniClient, type OmniClientService } from "../../src/api/OmniClient.js";
import type { ImageTask } from "../../src/protocol/wire.js";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { fromImage } from "../../src/protocol/TaskView.js";

const apiKey = "emu-key-series-Q83jd92Lm";
const t = suite<{ em: RunningEmulator }>("series image answers", { em: undefined as unknown as RunningEmulator });

t.before(async (ctx) => {
  ctx.em = await startEmulator({ apiKey, slots: { video: 50, image: 50 } });
});
t.after(async (ctx) => {
  await ctx.em.close();
});

const withClient = <A>(em: RunningEmulator, use: (client: OmniClientService) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(OmniClient.make({ baseUrl: em.url, apiKey: Redacted.make(apiKey) }), use)) as Effect.Effect<A, never>);

/** A series of three, with or without watermarked copies, finished; its answer as the client got it. */
const seriesTask = async (em: RunningEmulator, id: string, watermark: boolean): Promise<ImageTask> => {
  await withClient(em, (c) =>
    // The model that takes series, named after the emulator's service (it is being renamed).
    c.createImage({ prompt: "a kite, three views", model_name: `${em.config.service}-v3-omni`, aspect_ratio: "1:1", result_type: "series", series_amount: 3, watermark_info: { enabled: watermark }, external_task_id: id }),
  );
  em.advanceClock(10 * 60_000);
  return withClient(em, (c) => c.getImage(id));
};

const fetches = async (url: string): Promise<boolean> => (await fetch(url)).status === 200;

const variants = (task: ImageTask, watermark: boolean) => fromImage(task, watermark, "USD").outputs.map((o) => `${o.index}:${o.variant}`);

t("by default the emulator answers as the service's example: both lists, watermark_url on every entry", async ({ em }) => {
  em.reset();
  const plain = await seriesTask(em, "series-vendor-1", false);
  assert.is(plain.task_result?.result_type, "series");
  assert.is(plain.task_result?.images?.length, 3);
  assert.is(plain.task_result?.series_images?.length, 3);
  for (const entry of [...plain.task_result!.images!, ...plain.task_result!.series_images!]) {
    assert.equal(Object.keys(entry).sort(), ["index", "url", "watermark_url"]);
    assert.is(entry.watermark_url, "", "no watermarked copy was asked for");
  }
  assert.equal(variants(plain, false), ["0:main", "1:main", "2:main"]);

  const marked = await seriesTask(em, "series-vendor-2", true);
  for (const entry of marked.task_result!.series_images!) assert.ok(await fetches(entry.watermark_url!), entry.watermark_url);
  const outputs = fromImage(marked, true, "USD").outputs;
  assert.equal(outputs.map((o) => `${o.index}:${o.variant}`), ["0:main", "0:watermark", "1:main", "1:watermark", "2:main", "2:watermark"]);
  for (const o of outputs) assert.ok(await fetches(o.url!), o.url);
  assert.equal(variants(marked, false), ["0:main", "1:main", "2:main"]);
});

t("the older shape (only series_images) is still answered when asked for, and read the same", async ({ em }) => {
  em.reset();
  em.configure({ seriesImagesAnswer: "series-images-only" });
  try {
    const plain = await seriesTask(em, "series-old-1", false);
    assert.equal(plain.task_result?.images, []);
    assert.is(plain.task_result?.series_images?.length, 3);
    assert.is(plain.task_result!.series_images![0]!.watermark_url, undefined);
    assert.equal(variants(plain, false), ["0:main", "1:main", "2:main"]);
    const marked = await seriesTask(em, "series-old-2", true);
    assert.equal(variants(marked, true), ["0:main", "0:watermark", "1:main", "1:watermark", "2:main", "2:watermark"]);
  } finally {
    em.configure({ seriesImagesAnswer: "vendor-example" });
  }
});

t("a series answer that lists its images only in `images` is read from there; empty lists are none", async ({ em }) => {
  em.reset();
  const vendor = await seriesTask(em, "series-images-1", true);
  const onlyImages: ImageTask = { ...vendor, task_result: { result_type: "series", images: vendor.task_result!.images!, series_images: [] } };
  const outputs = fromImage(onlyImages, true, "USD").outputs;
  assert.equal(outputs.map((o) => `${o.index}:${o.variant}:${o.group_id}`), [0, 1, 2].flatMap((i) => [`${i}:main:${vendor.task_id}`, `${i}:watermark:${vendor.task_id}`]));
  for (const o of outputs) assert.ok(await fetches(o.url!), o.url);
  const single: ImageTask = { ...vendor, task_result: { result_type: "single", images: [], series_images: vendor.task_result!.series_images! } };
  assert.equal(variants(single, false), ["0:main", "1:main", "2:main"]);
  const none: ImageTask = { ...vendor, task_result: { result_type: "series", images: [], series_images: [] } };
  assert.equal(variants(none, true), []);
});

t.run();
