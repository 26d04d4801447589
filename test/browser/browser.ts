// Shared by the tests that open a page in a real headless Chromium (the report, later
// the review page): finds the system browser (Debian's `chromium`; never downloads one),
// launches it through playwright-core, and records what must not happen on a page:
// console errors, uncaught exceptions, failed requests. Without a browser the tests are
// registered as skipped and a loud line says so; test/run.mjs repeats it in its summary.

import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { type Browser, type Page, chromium } from "playwright-core";
import type { Test } from "uvu";

/** test/run.mjs looks for this marker in a test file's output. */
export const SKIP_MARKER = "BROWSER TESTS SKIPPED";
export const HOW_TO_ENABLE =
  "install Chromium (as root: apt-get update && apt-get install -y chromium; .ci/run does this), or set OMNIBATCH_CHROMIUM to a Chromium/Chrome binary";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"];

/** The browser binary to use, or undefined when this machine has none. */
export const chromiumPath = (): string | undefined => {
  const fromEnv = process.env.OMNIBATCH_CHROMIUM;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  return CANDIDATES.find((p) => existsSync(p));
};

export const launchBrowser = async (executablePath: string): Promise<Browser> =>
  chromium.launch({
    executablePath,
    headless: true,
    // Root in CI containers: Chromium's sandbox needs user namespaces it may not have.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--mute-audio"],
    timeout: 60_000,
  });

/** What went wrong on a page while it was watched. */
export interface PageProblems {
  readonly consoleErrors: string[];
  readonly pageErrors: string[];
  readonly failedRequests: string[];
  /** Requests to anything but file: and data: URLs (a report must need no network). */
  readonly networkRequests: string[];
}

export const watchPage = (page: Page): PageProblems => {
  const problems: PageProblems = { consoleErrors: [], pageErrors: [], failedRequests: [], networkRequests: [] };
  page.on("console", (m) => {
    if (m.type() === "error") problems.consoleErrors.push(m.text());
  });
  page.on("pageerror", (e) => problems.pageErrors.push(String(e)));
  page.on("requestfailed", (r) => problems.failedRequests.push(`${r.url()}: ${r.failure()?.errorText ?? "failed"}`));
  page.on("request", (r) => {
    if (!/^(file|data|blob):/.test(r.url())) problems.networkRequests.push(r.url());
  });
  page.on("response", (r) => {
    if (r.status() >= 400) problems.failedRequests.push(`${r.url()}: HTTP ${r.status()}`);
  });
  return problems;
};

export const fileUrl = (path: string, query = ""): string => `${pathToFileURL(path).href}${query}`;

/**
 * Registers the browser tests of a suite: with a browser, `body` gets one shared browser
 * (closed after the suite); without one, every test is registered as skipped and the
 * skip is said loudly.
 */
export const browserSuite = (
  suite: Test,
  names: readonly string[],
  body: (ctx: { browser: () => Browser }) => Record<string, () => Promise<void>>,
): void => {
  const path = chromiumPath();
  if (!path) {
    process.stdout.write(`\n*** ${SKIP_MARKER}: no Chromium on this machine (${names.length} tests). To run them: ${HOW_TO_ENABLE}. ***\n\n`);
    for (const name of names) suite.skip(name, () => undefined);
    return;
  }
  let browser: Browser | undefined;
  suite.before(async () => {
    browser = await launchBrowser(path);
  });
  suite.after(async () => {
    await browser?.close();
  });
  const tests = body({
    browser: () => {
      if (!browser) throw new Error("the browser did not start");
      return browser;
    },
  });
  for (const name of names) {
    const fn = tests[name];
    if (!fn) throw new Error(`no body for browser test '${name}'`);
    suite(name, fn);
  }
  for (const name of Object.keys(tests)) if (!names.includes(name)) throw new Error(`browser test '${name}' is not in the list of names`);
};
