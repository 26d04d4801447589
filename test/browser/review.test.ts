// The review page in a real headless Chromium, served by the built CLI (`omnibatch
// review`), on the demo with `review: true` on its image job, run against a standalone
// emulator that keeps its tasks between runs (as the service does): two stills approved
// and one rejected by clicking; the review file then holds exactly those decisions; the
// next run makes exactly two clips, from those two files, none from the rejected one;
// a decision made on other bytes (another sha256) does not cover the still; the page
// refuses requests without its token; Ctrl-C stops the server cleanly.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readLockFile } from "../../src/state/readLockFile.js";
import { readReviewFile } from "../../src/review/readReviewFile.js";
import { bin, cli, removeDir, reviewedDemo, startEmulatorProcess } from "../review/reviewFlow.js";
import { browserSuite, watchPage } from "./browser.js";

declare const document: any;

const t = suite("the review page in Chromium");
const M = "manifests/demo.yaml";
const NAMES = ["approve two stills and reject one by clicking; the next run makes exactly two clips from them; a changed still is not covered"] as const;

browserSuite(t, NAMES, ({ browser }) => ({
  [NAMES[0]]: async () => {
    const dir = reviewedDemo();
    const emulator = await startEmulatorProcess();
    let server: ReturnType<typeof execa> | undefined;
    try {
      const first = await cli(dir, ["run", M, "--yes"], emulator.env);
      assert.is(first.exitCode, 3, first.all);
      const lockPath = join(dir, "manifests", "demo.lock.json");
      const lock = (await readLockFile(lockPath))!;
      const stillOf = new Map(Object.entries(lock.tasks).filter(([, x]) => x.job === "keyframes").map(([id, x]) => [x.dir, { id, sha: x.outputs[0]!.sha256! }]));
      assert.is(stillOf.size, 5);

      // The page reads the files on each request: the next run's results show on a reload.
      server = execa("node", [bin, "review", M], { cwd: dir, reject: false, buffer: true, env: { GITHUB_STEP_SUMMARY: "" } });
      const url = await new Promise<string>((resolve, reject) => {
        let text = "";
        const timer = setTimeout(() => reject(new Error(`no address printed: ${text}`)), 30_000);
        server!.stdout!.on("data", (c: Buffer) => {
          text += c.toString("utf8");
          const m = /(http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/)/.exec(text);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
      const problems = watchPage(page);
      await page.goto(url);
      await page.waitForSelector("html[data-review-ready='1']", { timeout: 30_000 });
      assert.is(await page.textContent("#review-left"), "5 left to review");
      const tileOf = (dirName: string) => page.locator(`.tile[data-id="${stillOf.get(dirName)!.id}"][data-output="0"]`);
      await tileOf("keyframes/A-1_studio").locator("button.approve").click();
      await page.waitForFunction(() => document.querySelector("#review-left").textContent === "4 left to review", undefined, { timeout: 15_000 });
      await tileOf("keyframes/A-1_street").locator("button.approve").click();
      await page.waitForFunction(() => document.querySelector("#review-left").textContent === "3 left to review", undefined, { timeout: 15_000 });
      await tileOf("keyframes/B-2_street").locator("button.reject").click();
      await page.waitForFunction(() => document.querySelector("#review-left").textContent === "2 left to review", undefined, { timeout: 15_000 });
      assert.is(await tileOf("keyframes/B-2_street").getAttribute("data-review"), "rejected");
      assert.is(await tileOf("keyframes/A-1_studio").getAttribute("data-review"), "approved");
      assert.is(await page.textContent("#review-counts"), "2 approved, 1 rejected");

      // Without the token: nothing, not even the page.
      const origin = new URL(url).origin;
      const bare = await page.evaluate(async (o: string) => (await fetch(`${o}/`)).status, origin);
      const wrong = await page.evaluate(async (o: string) => (await fetch(`${o}/not-the-token/api/state`)).status, origin);
      assert.equal([bare, wrong], [404, 404]);
      assert.equal(problems.pageErrors, []);
      assert.equal(problems.consoleErrors.filter((e) => !/404/.test(e)), []);

      // Exactly those decisions, on the files' sha256.
      const reviewPath = join(dir, "manifests", "demo.review.yaml");
      const decided = readReviewFile(reviewPath).outputs.map((e) => [e.task, e.output, e.sha256, e.decision]);
      const want = [
        ["keyframes/A-1_studio", "approved"],
        ["keyframes/A-1_street", "approved"],
        ["keyframes/B-2_street", "rejected"],
      ].map(([d, decision]) => [stillOf.get(d!)!.id, 0, stillOf.get(d!)!.sha, decision]);
      assert.equal(decided.sort(), want.sort());

      // The next run: exactly two clips, from the two approved files.
      const second = await cli(dir, ["run", M, "--yes"], emulator.env);
      assert.is(second.exitCode, 3, second.all);
      assert.match(second.all!, /keyframes: 2 awaiting review; clips: 2 waiting on review/);
      const after = (await readLockFile(lockPath))!;
      const clips = Object.values(after.tasks).filter((x) => x.job === "clips");
      assert.is(clips.length, 2);
      const upstream = clips.map((c) => [c.upstream!.task, c.upstream!.output]).sort();
      assert.equal(upstream, [[stillOf.get("keyframes/A-1_studio")!.id, 0], [stillOf.get("keyframes/A-1_street")!.id, 0]].sort());
      assert.ok(clips.every((c) => c.state === "downloaded"));

      // A decision made on other bytes does not cover the still: the page shows it awaiting again.
      const text = readFileSync(reviewPath, "utf8");
      writeFileSync(reviewPath, text.replace(stillOf.get("keyframes/A-1_studio")!.sha, "ab".repeat(32)));
      await page.reload();
      await page.waitForSelector("html[data-review-ready='1']", { timeout: 30_000 });
      assert.is(await page.textContent("#review-left"), "3 left to review");
      assert.is(await tileOf("keyframes/A-1_studio").getAttribute("data-review"), "awaiting");
      await page.close();

      server.kill("SIGINT");
      const done = await server;
      server = undefined;
      assert.is(done.exitCode, 0, String(done.stderr));
      assert.match(String(done.stdout), /review page stopped; 3 awaiting review, 1 approved, 1 rejected/);
    } finally {
      server?.kill("SIGKILL");
      await emulator.stop();
      removeDir(dir);
    }
  },
}));

t.run();
