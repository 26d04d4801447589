// The review server checks every part of a result's path, as every other reader of the
// outputs does (OutputsFolderCheck.ts folderGuard): a task folder replaced by a symbolic
// link to a folder outside the outputs, holding the very bytes recorded, is "missing" on
// the page and its file answers 404 over real HTTP; a link that stays inside the outputs
// is followed as the run's writer follows it. The built CLI: `run --emulate`, then
// `review --emulate`.

import { mkdirSync, renameSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { cli, removeDir, reviewedDemo, startReviewPage, type ReviewPage } from "./reviewFlow.js";

const M = "manifests/demo.yaml";
const t = suite<{ dir: string; page?: ReviewPage }>("review: links in parent folders", {} as never);

t.before((ctx) => {
  ctx.dir = reviewedDemo();
});
t.after((ctx) => {
  ctx.page?.kill();
  removeDir(ctx.dir);
});

const href = (page: ReviewPage, path: string) => `${page.url}${path.split("/").map(encodeURIComponent).join("/")}`;

t("a task folder that is a link out of the outputs is not followed (missing, 404); a link inside is", async (ctx) => {
  const run = await cli(ctx.dir, ["run", M, "--emulate", "--yes"]);
  assert.is(run.exitCode, 3, run.all);
  const lock = (await readLockFile(join(ctx.dir, "manifests", "demo.emulate.lock.json")))!;
  const stills = Object.values(lock.tasks)
    .filter((x) => x.job === "keyframes")
    .map((x) => ({ dir: x.dir, path: x.outputs[0]!.path! }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  const [outside, inside, kept] = stills;
  const outputs = join(ctx.dir, "outputs", "demo-emulated");

  // The task's folder moved out of the outputs and put back as a link: same bytes, same names.
  const away = join(ctx.dir, "away", outside!.dir);
  mkdirSync(dirname(away), { recursive: true });
  renameSync(join(outputs, outside!.dir), away);
  symlinkSync(away, join(outputs, outside!.dir));
  // Another moved to a folder still inside the outputs, linked back.
  const moved = join(outputs, "moved-here");
  renameSync(join(outputs, inside!.dir), moved);
  symlinkSync(moved, join(outputs, inside!.dir));

  const page = (ctx.page = await startReviewPage(ctx.dir, [M, "--emulate"]));
  const html = await (await fetch(page.url)).text();
  const data = JSON.parse(/<script type="application\/json" id="review-data">(.*?)<\/script>/s.exec(html)![1]!);
  assert.equal(data.missing, [outside!.path], "only the file behind the link out is missing");
  const out = await fetch(href(page, outside!.path));
  assert.is(out.status, 404);
  await out.arrayBuffer();
  const head = await fetch(href(page, outside!.path), { method: "HEAD" });
  assert.is(head.status, 404);
  const ranged = await fetch(href(page, outside!.path), { headers: { range: "bytes=0-9" } });
  assert.is(ranged.status, 404);
  await ranged.arrayBuffer();
  for (const s of [inside!, kept!]) {
    const r = await fetch(href(page, s.path));
    assert.is(r.status, 200, s.path);
    await r.arrayBuffer();
  }
  const done = await page.stop();
  assert.is(done.exitCode, 0, done.stderr);
});

t.run();
