// report.html's superseded control in a real headless Chromium, from file://: results
// replaced by a changed task are hidden and not counted until the control (or ?old=1)
// asks for them, then shown marked; orphaned results are always shown, marked.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { imageOutput } from "../../src/emulator/OutputMedia.js";
import { writeReports } from "../../src/report/writeReports.js";
import type { LockTask } from "../../src/state/LockFile.js";
import { browserSuite, fileUrl, watchPage } from "./browser.js";

const t = suite("report.html superseded control in Chromium");
const temps: string[] = [];
t.after(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** Four tasks at two positions: red (old, superseded by red2), red2, blue; one clip with an image each. */
const reportWithSuperseded = async (): Promise<string> => {
  const out = mkdtempSync(join(tmpdir(), "omnibatch-browser-old-"));
  temps.push(out);
  const png = imageOutput({ aspectRatio: "1:1", watermark: false, seed: 7 });
  const task = (id: string, colour: string, dir: string, extra: Partial<LockTask> = {}): [string, LockTask] => {
    mkdirSync(join(out, dir), { recursive: true });
    writeFileSync(join(out, dir, "image-1.png"), png);
    return [
      id,
      {
        job: "pics", kind: "image", vars: { colour }, dir, request_hash: `h-${id}`, take: 1, attempt: 1, state: "downloaded",
        updated_at: 1, outputs: [{ type: "image", index: 0, variant: "main", path: `${dir}/image-1.png`, size: png.length, sha256: "a".repeat(64) }],
        billing: [{ charge_type: "cash", amount: "0.03", currency: "USD" }], ...extra,
      },
    ];
  };
  const tasks = Object.fromEntries([
    task("o-pics-red1", "red", "pics/red", { superseded_by: "o-pics-red2" }),
    task("o-pics-red2", "red", "pics/red-aaaaaa"),
    task("o-pics-blue", "blue", "pics/blue"),
  ]);
  await writeReports({ lock: { lockfile_version: 2, name: "o", tasks }, outputsDir: out, manifestName: "o", env: {} });
  return join(out, "report.html");
};

const NAMES = [
  "superseded results are hidden and not counted until the control asks for them; the address keeps the choice",
] as const;

browserSuite(t, NAMES, ({ browser }) => ({
  [NAMES[0]]: async () => {
    const report = await reportWithSuperseded();
    const page = await browser().newPage();
    const problems = watchPage(page);
    await page.goto(fileUrl(report));
    await page.waitForSelector("html[data-ready]");
    assert.is(await page.locator(".tile").count(), 2, "the current results only");
    assert.is(await page.locator('.tile[data-id="o-pics-red1"]').count(), 0);
    const totals = await page.locator("#totals").innerText();
    assert.match(totals, /tasks\s*2/);
    assert.match(totals, /superseded\s*1/);
    assert.match(await page.locator("#f-old-count").innerText(), "1");
    await page.check("#f-old");
    assert.is(await page.locator(".tile").count(), 3);
    const old = page.locator('.tile[data-id="o-pics-red1"]');
    assert.is(await old.getAttribute("data-standing"), "superseded");
    assert.match(await old.innerText(), /superseded/i);
    assert.match(page.url(), "old=1");
    await page.uncheck("#f-old");
    assert.is(await page.locator(".tile").count(), 2);
    // The same from the address alone.
    const again = await browser().newPage();
    await again.goto(fileUrl(report, "?old=1"));
    await again.waitForSelector("html[data-ready]");
    assert.is(await again.locator(".tile").count(), 3);
    assert.ok(await again.isChecked("#f-old"));
    assert.equal(problems.consoleErrors, []);
    assert.equal(problems.pageErrors, []);
    assert.equal(problems.failedRequests, []);
    await page.close();
    await again.close();
  },
}));

t.run();
