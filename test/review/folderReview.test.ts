// The review page's media from an outputs folder (the built CLI, `run --emulate` then
// `review --emulate`), the same rules as from a store (test/review/storeReview.test.ts):
// whole files and byte ranges byte for byte; a recorded file deleted, cut short, or put
// back as a link is "missing" on the page and never served; an unrecorded file in the
// folder is 404.

import { createHash } from "node:crypto";
import { readFileSync, symlinkSync, truncateSync, unlinkSync, writeFileSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { cli, removeDir, reviewedDemo, startReviewPage, type ReviewPage } from "./reviewFlow.js";

const M = "manifests/demo.yaml";
const t = suite<{ dir: string; page?: ReviewPage; stills: { id: string; path: string; size: number; sha256: string }[] }>("review with outputs in a folder", {} as never);

t.before(async (ctx) => {
  ctx.dir = reviewedDemo();
  const run = await cli(ctx.dir, ["run", M, "--emulate", "--yes"]);
  assert.is(run.exitCode, 3, run.all);
  const lock = (await readLockFile(join(ctx.dir, "manifests", "demo.emulate.lock.json")))!;
  ctx.stills = Object.entries(lock.tasks)
    .filter(([, x]) => x.job === "keyframes")
    .map(([id, x]) => ({ id, path: x.outputs[0]!.path!, size: x.outputs[0]!.size!, sha256: x.outputs[0]!.sha256! }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  assert.is(ctx.stills.length, 5);
});
t.after((ctx) => {
  ctx.page?.kill();
  removeDir(ctx.dir);
});

const href = (page: ReviewPage, path: string) => `${page.url}${path.split("/").map(encodeURIComponent).join("/")}`;
const bytesOf = async (r: Response) => Buffer.from(await r.arrayBuffer());

t("whole files and byte ranges, byte for byte, from the folder", async (ctx) => {
  const page = (ctx.page = await startReviewPage(ctx.dir, [M, "--emulate"]));
  assert.match(page.output(), /media from \S+demo-emulated\n/);
  for (const s of ctx.stills) {
    const r = await fetch(href(page, s.path));
    assert.is(r.status, 200);
    assert.is(r.headers.get("accept-ranges"), "bytes");
    assert.is(createHash("sha256").update(await bytesOf(r)).digest("hex"), s.sha256);
  }
  const s = ctx.stills[0]!;
  const whole = await bytesOf(await fetch(href(page, s.path)));
  const part = await fetch(href(page, s.path), { headers: { range: "bytes=100-" } });
  assert.is(part.status, 206);
  assert.is(part.headers.get("content-range"), `bytes 100-${s.size - 1}/${s.size}`);
  assert.ok((await bytesOf(part)).equals(whole.subarray(100)));
  assert.is((await fetch(href(page, s.path), { headers: { range: `bytes=${s.size + 5}-` } })).status, 416);
});

t("a deleted, cut-short or linked file is missing and not served; an unrecorded file is 404", async ({ dir, page, stills }) => {
  const outputs = join(dir, "outputs", "demo-emulated");
  const [deleted, cut, linked, kept] = stills;
  unlinkSync(join(outputs, deleted!.path));
  truncateSync(join(outputs, cut!.path), 10);
  // The same bytes, but through a link: a link in the outputs folder is never followed.
  const real = join(dir, "elsewhere.png");
  copyFileSync(join(outputs, linked!.path), real);
  unlinkSync(join(outputs, linked!.path));
  symlinkSync(real, join(outputs, linked!.path));
  writeFileSync(join(outputs, "keyframes", "unrecorded.png"), readFileSync(join(outputs, kept!.path)));
  const html = await (await fetch(page!.url)).text();
  const data = JSON.parse(/<script type="application\/json" id="review-data">(.*?)<\/script>/s.exec(html)![1]!);
  assert.equal(data.missing, [deleted!.path, cut!.path, linked!.path].sort());
  for (const s of [deleted!, cut!, linked!]) assert.is((await fetch(href(page!, s.path))).status, 404, s.path);
  assert.is((await fetch(href(page!, kept!.path))).status, 200);
  assert.is((await fetch(href(page!, "keyframes/unrecorded.png"))).status, 404);
  const done = await page!.stop();
  assert.is(done.exitCode, 0, done.stderr);
});

t.run();
