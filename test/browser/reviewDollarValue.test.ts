// A value with `$` patterns (`` $` ``, `$'`, `$&`) placed into the review page stays a
// value: the page is built by slicing, not by String.replace with a replacement string
// (where `` $` `` copied the whole report into the review data and the page lost its
// controls). The demo with `review: true` on its image job, a style written
// "stu$`dio$'$&", `run --emulate`, one result of that style deleted (so its path, with the
// value, is in the review data as missing), then the built CLI's review page in Chromium.

import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { cli, removeDir, reviewedDemo, startReviewPage, type ReviewPage } from "../review/reviewFlow.js";
import { browserSuite, watchPage } from "./browser.js";

declare const document: any;

const t = suite("review page with $ patterns in a value");
const M = "manifests/demo.yaml";
const STYLE = "stu$`dio$'$&";
const NAMES = ["a value with $` $' $& keeps the review controls and shows literally"] as const;

browserSuite(t, NAMES, ({ browser }) => ({
  [NAMES[0]]: async () => {
    const dir = reviewedDemo();
    let page: ReviewPage | undefined;
    try {
      const path = join(dir, M);
      const text = readFileSync(path, "utf8");
      const edited = text.replace("style: [studio, street]", () => `style: [${JSON.stringify(STYLE)}, street]`);
      assert.is.not(edited, text, "the demo's style axis changed shape");
      writeFileSync(path, edited);
      const run = await cli(dir, ["run", M, "--emulate", "--yes"]);
      assert.is(run.exitCode, 3, run.all);
      const lock = (await readLockFile(join(dir, "manifests", "demo.emulate.lock.json")))!;
      const withValue = Object.values(lock.tasks).filter((x) => x.job === "keyframes" && x.vars?.style === STYLE);
      assert.is(withValue.length, 3);
      const gone = withValue[0]!.outputs[0]!.path!;
      assert.ok(gone.includes(STYLE), gone);
      unlinkSync(join(dir, "outputs", "demo-emulated", ...gone.split("/")));

      page = await startReviewPage(dir, [M, "--emulate"]);
      const tab = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
      const problems = watchPage(tab);
      await tab.goto(page.url);
      await tab.waitForSelector("html[data-review-ready='1']", { timeout: 30_000 });
      // The review data is the server's, whole: the missing path carries the value as it is.
      const data = JSON.parse((await tab.textContent("#review-data"))!);
      assert.equal(data.missing, [gone]);
      assert.is(await tab.locator("button.approve").count(), 5);
      assert.is(await tab.locator("button.reject").count(), 5);
      assert.is(await tab.textContent("#review-left"), "5 left to review");
      const shown = await tab.evaluate(() => document.body.innerText as string);
      assert.ok(shown.includes(STYLE), "the value is shown as written");
      // One report in the page, not a second copy pasted in by `` $` ``.
      assert.is((await tab.content()).split("<title>").length, 2);
      assert.equal(problems.pageErrors, []);
    } finally {
      page?.kill();
      removeDir(dir);
    }
  },
}));

t.run();
