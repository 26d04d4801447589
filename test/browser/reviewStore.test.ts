// The review page in a real headless Chromium with outputs in an S3-compatible store
// (s3rver on 127.0.0.1): the demo (keyframes under review) run by the built CLI with
// `--outputs s3://...`, one still then removed from the store, `omnibatch review
// --outputs s3://...` serving the page. The stills load (naturalWidth > 0) through the
// review server, the browser never asks the store itself; the removed still shows as
// missing and cannot be approved, but can be rejected; an approval by click lands in the
// review file with the lockfile's sha256; the next run to the store makes exactly the
// approved clip, and the page plays it, seeking by byte ranges; an unrecorded key and a
// request without the token are refused.

import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readReviewFile } from "../../src/review/readReviewFile.js";
import { readLockFile } from "../../src/state/readLockFile.js";
import { openS3Store } from "../../src/store/S3Store.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import { cli, startReviewPage, type ReviewPage } from "../review/reviewFlow.js";
import { M, storeReviewed } from "../review/storeReviewFlow.js";
import { browserSuite, watchPage } from "./browser.js";

declare const document: any;

const t = suite("the review page in Chromium, outputs in a store");
const NAMES = [
  "stills load from the store through the review server; a missing one shows missing; approve by click; the approved clip plays and seeks by ranges; unknown keys and no token refused",
] as const;

browserSuite(t, NAMES, ({ browser }) => ({
  [NAMES[0]]: async () => {
    const w = await storeReviewed();
    let server: ReviewPage | undefined;
    try {
      const gone = w.stills.get("keyframes/B-2_studio")!;
      const chosen = w.stills.get("keyframes/A-1_studio")!;
      const store = await openS3Store(parseStoreUrl(w.url) as StoreLocation, { env: w.s3.env });
      try {
        await store.remove(gone.path);
      } finally {
        store.close();
      }

      server = await startReviewPage(w.dir, [M, "--outputs", w.url], w.s3.env);
      assert.match(server.output(), /1 output\(s\) under review are missing there/);
      const origin = new URL(server.url).origin;
      const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
      const problems = watchPage(page);
      const ranged: { url: string; status: number; range: string | undefined }[] = [];
      page.on("response", (r) => {
        if (/\.mp4/.test(r.url())) ranged.push({ url: r.url(), status: r.status(), range: r.request().headers()["range"] });
      });
      await page.goto(server.url);
      await page.waitForSelector("html[data-review-ready='1']", { timeout: 30_000 });
      assert.is(await page.textContent("#review-left"), "5 left to review");
      assert.is(await page.textContent("#review-missing"), `1 missing from ${w.url}`);

      const tileOf = (id: string) => page.locator(`.tile[data-id="${id}"][data-output="0"]`);
      // Every still the store holds loads, through the review server.
      const present = [...w.stills.values()].filter((s) => s !== gone);
      await page.waitForFunction(
        (ids: string[]) =>
          ids.every((id) => {
            const img = document.querySelector(`.tile[data-id="${id}"][data-output="0"] .media img`);
            return img && img.complete && img.naturalWidth > 0;
          }),
        present.map((s) => s.id),
        { timeout: 30_000 },
      );
      for (const s of present) {
        const src = await tileOf(s.id).locator(".media img").getAttribute("src");
        assert.is(decodeURIComponent(src!.replace(/^\.\//, "")), s.path);
      }
      // The missing one: a placeholder naming the store, no image, Approve disabled.
      const missingTile = tileOf(gone.id);
      assert.is(await missingTile.getAttribute("data-missing"), "1");
      assert.is(await missingTile.locator(".media img").count(), 0);
      assert.is(await missingTile.locator(".placeholder.missing").textContent(), `missing from ${w.url}`);
      assert.ok(await missingTile.locator("button.approve").isDisabled());
      assert.is(await page.textContent("#review-approve-shown"), "Approve shown (4)");
      assert.is(await page.textContent("#review-reject-shown"), "Reject shown (5)");

      await tileOf(chosen.id).locator("button.approve").click();
      await page.waitForFunction(() => document.querySelector("#review-left").textContent === "4 left to review", undefined, { timeout: 15_000 });
      await missingTile.locator("button.reject").click();
      await page.waitForFunction(() => document.querySelector("#review-left").textContent === "3 left to review", undefined, { timeout: 15_000 });
      assert.is(await tileOf(chosen.id).getAttribute("data-review"), "approved");
      assert.is(await missingTile.getAttribute("data-review"), "rejected");
      const decided = readReviewFile(join(w.dir, "manifests", "demo.review.yaml")).outputs.map((e) => [e.task, e.output, e.sha256, e.decision]);
      assert.equal(decided.sort(), [
        [chosen.id, 0, chosen.sha256, "approved"],
        [gone.id, 0, gone.sha256, "rejected"],
      ].sort());

      // Refused from the page itself: an object the store holds that is not a recorded
      // result (the still's task.json), and anything without the token.
      const statuses = await page.evaluate(
        async (a: { base: string; origin: string; still: string; sidecar: string }) =>
          Promise.all([`${a.base}${a.sidecar}`, `${a.origin}/${a.still}`, `${a.origin}/`].map(async (u) => (await fetch(u)).status)),
        { base: server.url, origin, still: chosen.path, sidecar: "keyframes/A-1_studio/task.json" },
      );
      assert.equal(statuses, [404, 404, 404]);

      // The next run to the store makes exactly the approved clip; the page plays it from the store.
      const second = await cli(w.dir, ["run", M, "--yes", "--outputs", w.url], w.env);
      assert.is(second.exitCode, 3, second.all);
      const lock = (await readLockFile(join(w.dir, "manifests", "demo.lock.json")))!;
      const clips = Object.entries(lock.tasks).filter(([, x]) => x.job === "clips");
      assert.equal(clips.map(([, c]) => [c.upstream!.task, c.upstream!.output]), [[chosen.id, 0]]);
      const [clipId, clip] = clips[0]!;
      await page.reload();
      await page.waitForSelector("html[data-review-ready='1']", { timeout: 30_000 });
      const video = page.locator(`.tile[data-id="${clipId}"] video`);
      await video.scrollIntoViewIfNeeded();
      await page.waitForFunction(
        (id: string) => {
          const v = document.querySelector(`.tile[data-id="${id}"] video`);
          return v && v.readyState >= 1 && v.duration > 0;
        },
        clipId,
        { timeout: 30_000 },
      );
      const seeked = await video.evaluate(
        (v: any) =>
          new Promise<number>((resolve) => {
            v.addEventListener("seeked", () => resolve(v.currentTime), { once: true });
            v.currentTime = v.duration * 0.75;
          }),
      );
      assert.ok(seeked > 0, `seeked to ${seeked}`);
      const clipPath = clip.outputs.find((o) => o.type === "video")!.path!;
      const mine = ranged.filter((r) => decodeURIComponent(new URL(r.url).pathname).endsWith(clipPath));
      assert.ok(mine.length > 0, "the clip was asked for");
      assert.ok(mine.every((r) => r.status === 206 && r.range !== undefined), JSON.stringify(mine));

      // The browser talked to the review server only, never to the store.
      assert.equal(problems.networkRequests.filter((u) => !u.startsWith(`${origin}/`)), []);
      assert.ok(!problems.networkRequests.some((u) => u.startsWith(w.s3.endpoint)));
      assert.equal(problems.pageErrors, []);
      // The only failures: the refused requests made above (and the removed still, should
      // the browser ask for it before the review script puts the placeholder in its place).
      const enc = (p: string) => p.split("/").map(encodeURIComponent).join("/");
      // (A refused fetch whose body was never read is also reported as aborted when the page reloads.)
      const expected = [`${server.url}${enc(gone.path)}`, `${server.url}keyframes/A-1_studio/task.json`, `${origin}/${chosen.path}`, `${origin}/`];
      assert.equal(problems.failedRequests.filter((f) => !expected.some((u) => f === `${u}: HTTP 404` || f === `${u}: net::ERR_ABORTED`)), []);
      await page.close();

      const done = await server.stop();
      server = undefined;
      assert.is(done.exitCode, 0, done.stderr);
      assert.match(done.stdout, /review page stopped; 3 awaiting review, 1 approved, 1 rejected/);
    } finally {
      server?.kill();
      await w.close();
    }
  },
}));

t.run();
