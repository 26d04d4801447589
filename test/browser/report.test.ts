// report.html in a real headless Chromium, opened from file://: the demo's report (run on
// the emulator by the built CLI) loads with no console error, no failed request and no
// network; one tile per output; the job, state and matrix filters change what is shown;
// a click shows the prompt; the keyboard moves between results; hostile text in the data
// stays text; and a 10,000-output report renders its first rows, scrolls and filters in
// bounded time (figures printed). Set OMNIBATCH_SCREENSHOT=docs/report.png to write the
// screenshot of the demo's report that README.md and docs/results.md show.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { imageOutput } from "../../src/emulator/OutputMedia.js";
import type { LockFile, LockTask } from "../../src/state/LockFile.js";
import { writeReports } from "../../src/report/writeReports.js";
import { browserSuite, fileUrl, watchPage } from "./browser.js";
import { copyManifests } from "../checkoutFiles.js";
import { readLockFile } from "../../src/state/readLockFile.js";

// Page functions run in the browser; the project's types are Node's.
declare const document: any;
declare const window: any;
declare const requestAnimationFrame: (f: () => void) => void;
type HTMLElement = { dataset: Record<string, string> };

const root = fileURLToPath(new URL("../..", import.meta.url));
const bin = join(root, "dist", "cli", "bin.js");
const t = suite("report.html in Chromium");
const temps: string[] = [];
const temp = (): string => {
  const d = mkdtempSync(join(tmpdir(), "omnibatch-browser-"));
  temps.push(d);
  return d;
};
t.after(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

interface Demo {
  readonly report: string;
  readonly lock: LockFile;
  readonly results: Array<Record<string, any>>;
}
let demo: Demo | undefined;
/** The demo manifest run on the emulator by the built CLI, then `report` (with the manifest). */
const runDemo = async (): Promise<Demo> => {
  if (demo) return demo;
  const dir = temp();
  copyManifests(dir);
  const run = await execa("node", [bin, "run", "manifests/demo.yaml", "--emulate", "--yes"], { cwd: dir, reject: false, all: true, timeout: 120_000 });
  assert.is(run.exitCode, 0, run.all);
  const rep = await execa("node", [bin, "report", "manifests/demo.yaml", "--emulate"], { cwd: dir, reject: false, all: true, timeout: 60_000 });
  assert.is(rep.exitCode, 0, rep.all);
  const outputs = join(dir, "outputs", "demo-emulated");
  const lock = (await readLockFile(join(dir, "manifests", "demo.emulate.lock.json")))!;
  const results = readFileSync(join(outputs, "results.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
  demo = { report: join(outputs, "report.html"), lock, results };
  return demo;
};

const mainOutputs = (lock: LockFile, job?: string) =>
  Object.values(lock.tasks)
    .filter((task) => job === undefined || task.job === job)
    .flatMap((task) => task.outputs.filter((o) => o.variant === "main" && o.path && (o.type === "image" || o.type === "video")));

const NAMES = [
  "the demo's report loads from file:// with no console error, no failed request and no network, one tile per output",
  "filters by job, state and matrix value change what is shown, and the address keeps them",
  "a click on a tile shows its prompt, settings and inputs; the keyboard moves between tiles and opens one",
  "hostile text in the data (script end, comment opener, markup) is shown as text and runs nothing",
  "10,000 outputs: first rows render, scrolling renders more and a filter round trip stays fast",
] as const;

browserSuite(t, NAMES, ({ browser }) => ({
  [NAMES[0]]: async () => {
    const d = await runDemo();
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const problems = watchPage(page);
    await page.goto(fileUrl(d.report), { waitUntil: "load" });
    await page.waitForSelector("html[data-ready]");
    // Every image in view loaded (lazy ones are in view on this page), videos read their metadata.
    await page.waitForFunction(() => [...document.images].every((i) => i.complete), undefined, { timeout: 20_000 });
    const broken = await page.$$eval("img", (imgs) => imgs.filter((i) => i.naturalWidth === 0).map((i) => i.getAttribute("src")));
    assert.equal(broken, []);
    const outputs = mainOutputs(d.lock);
    assert.ok(outputs.length >= 10, `${outputs.length} outputs`);
    assert.is(await page.locator(".tile[data-output]").count(), outputs.length);
    assert.is(await page.locator(".tile").count(), outputs.length + Object.values(d.lock.tasks).filter((x) => !x.outputs.some((o) => o.path)).length);
    // Each tile shows the file its task downloaded.
    const srcs = await page.$$eval(".tile[data-output] .media > :last-child", (els) => els.map((e) => e.getAttribute("src") ?? (e as HTMLElement).dataset.src ?? ""));
    assert.equal(srcs.map((s) => decodeURIComponent(s.replace(/^\.\//, "").replace(/#t=.*$/, ""))).sort(), outputs.map((o) => o.path!).sort());
    // A clip is shown beside the still it animates.
    assert.is(await page.locator('section[data-job="clips"] .media.pair img.from').count(), mainOutputs(d.lock, "clips").length);
    assert.match(await page.locator("#title").innerText(), "EMULATED");
    assert.match(await page.locator("#totals").innerText(), "budget");
    await page.waitForTimeout(300);
    assert.equal(problems.consoleErrors, []);
    assert.equal(problems.pageErrors, []);
    assert.equal(problems.failedRequests, []);
    assert.equal(problems.networkRequests, []);
    const shot = process.env.OMNIBATCH_SCREENSHOT;
    const target = shot ? resolve(root, shot) : join(temp(), "report.png");
    mkdirSync(dirname(target), { recursive: true });
    await page.screenshot({ path: target, fullPage: false });
    assert.ok(readFileSync(target).length > 10_000, "the screenshot has content");
    if (shot) process.stdout.write(`screenshot written to ${target}\n`);
    await page.close();
  },

  [NAMES[1]]: async () => {
    const d = await runDemo();
    const page = await browser().newPage();
    const problems = watchPage(page);
    await page.goto(fileUrl(d.report));
    await page.waitForSelector("html[data-ready]");
    const all = await page.locator(".tile").count();
    await page.selectOption("#f-job", "keyframes");
    assert.is(await page.locator(".tile").count(), mainOutputs(d.lock, "keyframes").length);
    assert.is(await page.locator('section[data-job="clips"]').count(), 0);
    const studio = Object.values(d.lock.tasks).filter((x) => x.job === "keyframes" && x.vars.style === "studio").length;
    await page.selectOption("#f-v-style", "studio");
    assert.is(await page.locator(".tile").count(), studio);
    assert.ok(studio > 0 && studio < mainOutputs(d.lock, "keyframes").length);
    assert.match(page.url(), "job=keyframes");
    assert.match(page.url(), "v.style=studio");
    await page.selectOption("#f-state", "downloaded");
    assert.is(await page.locator(".tile").count(), studio);
    // Rows and columns swap when asked: rows become the styles.
    await page.selectOption("#f-v-style", "");
    await page.selectOption("#f-rows", "style");
    const rowHeads = await page.locator(".rowhead").allInnerTexts();
    assert.equal(rowHeads.sort(), ["street", "studio"]);
    // The same filters from the query string alone.
    const again = await browser().newPage();
    await again.goto(fileUrl(d.report, "?job=clips&v.style=street"));
    await again.waitForSelector("html[data-ready]");
    const street = Object.values(d.lock.tasks).filter((x) => x.job === "clips" && (x.vars.item as any)?.vars?.style === "street").length;
    assert.ok(street > 0);
    assert.is(await again.locator(".tile").count(), street);
    assert.ok(street < all);
    assert.equal(problems.pageErrors, []);
    assert.equal(problems.consoleErrors, []);
    await again.close();
    await page.close();
  },

  [NAMES[2]]: async () => {
    const d = await runDemo();
    const page = await browser().newPage();
    const problems = watchPage(page);
    await page.goto(fileUrl(d.report, "?job=keyframes"));
    await page.waitForSelector("html[data-ready]");
    const first = page.locator(".tile").first();
    const id = await first.getAttribute("data-id");
    const record = d.results.find((r) => r.id === id)!;
    assert.ok(record.request?.prompt, "results.jsonl has the request");
    await first.click();
    const dialog = page.locator("dialog#detail");
    await dialog.waitFor({ state: "visible" });
    const text = await dialog.innerText();
    assert.match(text, record.request.prompt);
    assert.match(text, record.request.inputs[0].path);
    assert.match(text, String(record.task_id));
    assert.match(text, "1k");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    // Keyboard: the focused tile moves right, Enter opens that one.
    await page.locator(".tile").first().focus();
    await page.keyboard.press("ArrowRight");
    const second = await page.evaluate(() => document.activeElement?.getAttribute("data-id"));
    assert.is(second, await page.locator(".tile").nth(1).getAttribute("data-id"));
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "visible" });
    const other = d.results.find((r) => r.id === second)!;
    assert.match(await dialog.innerText(), other.request.prompt);
    assert.equal(problems.pageErrors, []);
    assert.equal(problems.consoleErrors, []);
    await page.close();
  },

  [NAMES[3]]: async () => {
    const out = temp();
    const evil = `</script><script>window.__pwned=1</script><!--<img src=x onerror="window.__pwned=2">`;
    const task: LockTask = {
      job: "keyframes",
      kind: "image",
      vars: { style: evil },
      dir: "keyframes/x",
      request_hash: "h",
      take: 1,
      attempt: 1,
      state: "failed",
      updated_at: 1,
      outputs: [],
      billing: [],
      error: { code: 1301, message: `flagged ${evil}`, at: 1 },
    };
    await writeReports({ lock: { lockfile_version: 1, name: "evil<b>", tasks: { "evil-1": task } }, outputsDir: out, manifestName: "evil<b>", env: {} });
    const html = readFileSync(join(out, "report.html"), "utf8");
    // The data can neither end its script element nor open a comment.
    const data = html.slice(html.indexOf('id="report-data">'), html.indexOf("</script>", html.indexOf('id="report-data">')));
    assert.not.match(data, "<");
    const page = await browser().newPage();
    const problems = watchPage(page);
    await page.goto(fileUrl(join(out, "report.html")));
    await page.waitForSelector("html[data-ready]");
    assert.is(await page.evaluate(() => (window as any).__pwned), undefined);
    assert.match(await page.locator(".failures").innerText(), `flagged ${evil}`);
    assert.match(await page.locator(".tile").innerText(), "failed");
    assert.is(await page.locator("img").count(), 0);
    assert.equal(problems.pageErrors, []);
    assert.equal(problems.failedRequests, []);
    await page.close();
  },

  [NAMES[4]]: async () => {
    const out = temp();
    const png = imageOutput({ aspectRatio: "1:1", watermark: false, seed: 3 });
    const tasks: Record<string, LockTask> = {};
    const N = 100;
    let failed = 0;
    for (let p = 0; p < N; p++) {
      for (let s = 0; s < N; s++) {
        const dir = `sheet/p${p}_s${s}`;
        const bad = (p * N + s) % 10 === 7;
        if (bad) failed++;
        else {
          mkdirSync(join(out, dir), { recursive: true });
          writeFileSync(join(out, dir, "image-1.png"), png);
        }
        tasks[`big-sheet-${String(p * N + s).padStart(5, "0")}`] = {
          job: "sheet",
          kind: "image",
          vars: { product: `P${p}`, style: `S${s}` },
          dir,
          request_hash: "h",
          take: 1,
          attempt: 1,
          state: bad ? "failed" : "downloaded",
          updated_at: 1,
          outputs: bad ? [] : [{ type: "image", index: 0, variant: "main", path: `${dir}/image-1.png`, size: png.length, sha256: "0".repeat(64) }],
          billing: bad ? [] : [{ charge_type: "cash", cash_type: "balance", amount: "0.02", currency: "USD", list_price: "0.03" }],
          ...(bad ? { error: { code: 1301, message: `content risk ${p % 3}`, at: 1 } } : {}),
        };
      }
    }
    const w0 = performance.now();
    await writeReports({ lock: { lockfile_version: 1, name: "big", tasks }, outputsDir: out, manifestName: "big", env: {} });
    const writeMs = performance.now() - w0;
    const html = join(out, "report.html");
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const problems = watchPage(page);
    const t0 = performance.now();
    await page.goto(fileUrl(html));
    await page.waitForSelector("html[data-ready]");
    await page.locator(".tile").first().waitFor();
    const firstMs = performance.now() - t0;
    const rendered = await page.locator(".tile").count();
    assert.ok(rendered > 0 && rendered < N * N / 4, `rendered ${rendered} tiles at first, not all`);
    // Scroll to the end of what is rendered: more rows appear.
    const s0 = performance.now();
    await page.locator(".more").first().scrollIntoViewIfNeeded();
    await page.waitForFunction((n) => document.querySelectorAll(".tile").length > n, rendered, { timeout: 10_000 });
    const scrollMs = performance.now() - s0;
    // Filter round trip: failed only, then back to everything.
    const f0 = performance.now();
    await page.selectOption("#f-state", "failed");
    await page.waitForFunction((n) => document.getElementById("shown")!.textContent!.startsWith(`${n} tasks`), failed);
    await page.selectOption("#f-state", "");
    await page.waitForFunction((n) => document.getElementById("shown")!.textContent!.startsWith(`${n} tasks`), N * N);
    const filterMs = performance.now() - f0;
    // The page answers promptly after all that (no long freeze).
    const p0 = performance.now();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(undefined))));
    const frameMs = performance.now() - p0;
    const bytes = readFileSync(html).length;
    process.stdout.write(
      `10,000 outputs: report.html ${(bytes / 1e6).toFixed(1)} MB written in ${writeMs.toFixed(0)} ms (with ${N * N - failed} task.json); ` +
        `first tiles after ${firstMs.toFixed(0)} ms (${rendered} tiles); scroll batch ${scrollMs.toFixed(0)} ms; ` +
        `filter round trip ${filterMs.toFixed(0)} ms; next frame ${frameMs.toFixed(0)} ms\n`,
    );
    // Generous bounds: a shared 2-core machine under load.
    assert.ok(firstMs < 15_000, `first render ${firstMs} ms`);
    assert.ok(scrollMs < 5_000, `scroll ${scrollMs} ms`);
    assert.ok(filterMs < 8_000, `filter ${filterMs} ms`);
    assert.ok(frameMs < 2_000, `frame ${frameMs} ms`);
    assert.equal(problems.pageErrors, []);
    assert.equal(problems.failedRequests, []);
    await page.close();
  },
}));

t.run();
