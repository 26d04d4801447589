// `omnibatch review` (the built CLI) with outputs in an S3-compatible store (s3rver on
// 127.0.0.1): the page's stills are streamed from the store through the review server,
// byte for byte, whole and in ranges; only the results the lockfile records are served
// (an object the store holds but the lockfile does not, a sidecar, a traversal: 404, and
// the store is not even asked); nothing without the token; a still missing from the store
// shows as missing without breaking the page; the store's credentials are in nothing the
// browser gets; --list/--approve/--reject need no store; an unreachable store is one line
// naming it (exit 2). The same page in Chromium: test/browser/reviewStore.test.ts.

import { createHash } from "node:crypto";
import { createServer } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { readReviewFile } from "../../src/review/readReviewFile.js";
import { openS3Store } from "../../src/store/S3Store.js";
import { parseStoreUrl, type StoreLocation } from "../../src/fs/StoreUrl.js";
import { cli, startReviewPage, type ReviewPage } from "./reviewFlow.js";
import { M, storeReviewed, type StoreReviewed } from "./storeReviewFlow.js";

const t = suite<{ w: StoreReviewed; page?: ReviewPage }>("review with outputs in a store", {} as never);

t.before(async (ctx) => {
  ctx.w = await storeReviewed();
});
t.after(async (ctx) => {
  ctx.page?.kill();
  await ctx.w?.close();
});

const href = (page: ReviewPage, path: string) => `${page.url}${path.split("/").map(encodeURIComponent).join("/")}`;
const bytesOf = async (r: Response) => Buffer.from(await r.arrayBuffer());
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
/** GETs of object keys (not listings) the store has seen that contain `text`. */
const storeGets = (w: StoreReviewed, text: string) => w.s3.seen.filter((r) => r.method === "GET" && !/list-type=2/.test(r.url) && r.url.includes(text)).length;

/** A port nothing listens on (taken and given back). */
const closedPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

t("the page streams each recorded still from the store, byte for byte, whole, in ranges and as HEAD", async (ctx) => {
  const { w } = ctx;
  const page = (ctx.page = await startReviewPage(w.dir, [M, "--outputs", w.url], w.s3.env));
  assert.match(page.output(), /5 awaiting review, 0 approved, 0 rejected/);
  assert.match(page.output(), /media from s3:\/\/results\/review\/demo \(through this page's server\)/);
  const html = await fetch(page.url);
  assert.is(html.status, 200);
  const text = await html.text();
  assert.match(text, /id="review-data"/);
  // Nothing the browser gets names the store's endpoint or carries its keys.
  const state = await (await fetch(`${page.url}api/state`)).text();
  for (const body of [text, state]) {
    assert.not.ok(body.includes(w.s3.secretAccessKey), "the secret key reached the page");
    assert.not.ok(body.includes(w.s3.accessKeyId), "the access key id reached the page");
    assert.not.ok(body.includes(w.s3.endpoint), "the store's endpoint reached the page");
  }
  assert.equal(JSON.parse(state).missing, []);

  for (const s of w.stills.values()) {
    const r = await fetch(href(page, s.path));
    assert.is(r.status, 200, s.path);
    assert.is(r.headers.get("content-type"), "image/png");
    assert.is(r.headers.get("accept-ranges"), "bytes");
    assert.is(Number(r.headers.get("content-length")), s.size);
    assert.is(sha256(await bytesOf(r)), s.sha256, s.path);
  }
  const one = [...w.stills.values()][0]!;
  const whole = await bytesOf(await fetch(href(page, one.path)));
  const part = await fetch(href(page, one.path), { headers: { range: "bytes=10-99" } });
  assert.is(part.status, 206);
  assert.is(part.headers.get("content-range"), `bytes 10-99/${one.size}`);
  assert.ok((await bytesOf(part)).equals(whole.subarray(10, 100)));
  const tail = await fetch(href(page, one.path), { headers: { range: "bytes=-16" } });
  assert.is(tail.status, 206);
  assert.ok((await bytesOf(tail)).equals(whole.subarray(one.size - 16)));
  const past = await fetch(href(page, one.path), { headers: { range: `bytes=${one.size}-` } });
  assert.is(past.status, 416);
  assert.is(past.headers.get("content-range"), `bytes */${one.size}`);
  const head = await fetch(href(page, one.path), { method: "HEAD" });
  assert.is(head.status, 200);
  assert.is(Number(head.headers.get("content-length")), one.size);
});

t("only recorded results: an unrecorded object, a sidecar, a report, traversals and bad escapes are 404, and the store is not asked", async ({ w, page }) => {
  const location = parseStoreUrl(w.url) as StoreLocation;
  const store = await openS3Store(location, { env: w.s3.env });
  try {
    // In the store, under the prefix, an image: but no task recorded it.
    await store.put("keyframes/unrecorded.png", Readable.from([Buffer.from("\x89PNG not a result")]), { contentType: "image/png" });
  } finally {
    store.close();
  }
  const sidecar = `${[...w.stills.keys()][0]}/task.json`;
  const before = w.s3.seen.length;
  for (const path of ["keyframes/unrecorded.png", sidecar, "report.html", "results.jsonl"]) {
    assert.is((await fetch(href(page!, path))).status, 404, path);
  }
  for (const raw of ["..%2F..%2Fmanifests%2Fdemo.yaml", "%2e%2e/%2e%2e/etc/passwd", "keyframes%2F..%2F..%2Fx.png", "%E0%A4%A", "%00.png"]) {
    assert.is((await fetch(`${page!.url}${raw}`)).status, 404, raw);
  }
  assert.is(storeGets(w, "unrecorded.png"), 0, "the store was asked for a key the lockfile does not record");
  assert.is(storeGets(w, "task.json"), 0);
  assert.is(w.s3.seen.length, before, "an unknown key made no store request at all");
});

t("without the token, or with another one, nothing is served", async ({ w, page }) => {
  const url = new URL(page!.url);
  const token = url.pathname.split("/")[1]!;
  const still = [...w.stills.values()][0]!.path;
  const other = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
  for (const path of ["/", `/${still}`, "/api/state", `/${other}/`, `/${other}/${still}`, `/${token}`, `/${token}x/${still}`]) {
    assert.is((await fetch(`${url.origin}${path}`)).status, 404, path);
  }
  assert.is((await fetch(href(page!, still))).status, 200, "the token's own address still serves");
});

t("a still missing from the store, or there with other bytes, is shown missing and not served; the page and the other stills still load", async ({ w, page }) => {
  const [gone, kept, other] = [...w.stills.values()];
  const store = await openS3Store(parseStoreUrl(w.url) as StoreLocation, { env: w.s3.env });
  try {
    await store.remove(gone!.path);
    await store.put(other!.path, Readable.from([Buffer.from("not the recorded still")]), { contentType: "image/png" });
  } finally {
    store.close();
  }
  const html = await fetch(page!.url);
  assert.is(html.status, 200);
  const data = JSON.parse(/<script type="application\/json" id="review-data">(.*?)<\/script>/s.exec(await html.text())![1]!);
  assert.equal(data.missing, [gone!.path, other!.path].sort());
  assert.equal(data.items.filter((i: { missing?: boolean }) => i.missing).map((i: { task: string }) => i.task).sort(), [gone!.id, other!.id].sort());
  assert.is((await fetch(href(page!, gone!.path))).status, 404);
  assert.is((await fetch(href(page!, other!.path))).status, 404);
  assert.is((await fetch(href(page!, other!.path), { headers: { range: "bytes=0-3" } })).status, 404, "nor a part of it");
  assert.is((await fetch(href(page!, kept!.path))).status, 200);
  const state = JSON.parse(await (await fetch(`${page!.url}api/state`)).text());
  assert.is(state.counts.awaiting, 5, "a missing still still awaits review (it can be rejected)");
});

t("Ctrl-C stops the page cleanly", async (ctx) => {
  const done = await ctx.page!.stop();
  ctx.page = undefined;
  assert.is(done.exitCode, 0, done.stderr);
  assert.match(done.stdout, /review page stopped; 5 awaiting review, 0 approved, 0 rejected/);
  assert.is(done.stderr, "");
});

t("--list, --approve and --reject need no store: they work with the store unreachable", async ({ w }) => {
  const down = { ...w.s3.env, AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${await closedPort()}` };
  const seen = w.s3.seen.length;
  const list = await cli(w.dir, ["review", M, "--outputs", w.url, "--list"], down);
  assert.is(list.exitCode, 0, list.all);
  assert.match(list.stdout, /5 output\(s\): 0 approved, 0 rejected, 5 awaiting review/);
  const approve = await cli(w.dir, ["review", M, "--outputs", w.url, "--approve", "keyframes product.sku=A-1"], down);
  assert.is(approve.exitCode, 0, approve.all);
  assert.match(approve.stdout, /^approved 2 output\(s\)/);
  const reject = await cli(w.dir, ["review", M, "--reject", "keyframes product.sku=B-2 style=street"], down);
  assert.is(reject.exitCode, 0, reject.all);
  const decided = readReviewFile(join(w.dir, "manifests", "demo.review.yaml")).outputs.map((e) => [e.task, e.sha256, e.decision]);
  const want = [
    ["keyframes/A-1_studio", "approved"],
    ["keyframes/A-1_street", "approved"],
    ["keyframes/B-2_street", "rejected"],
  ].map(([d, decision]) => [w.stills.get(d!)!.id, w.stills.get(d!)!.sha256, decision]);
  assert.equal(decided.sort(), want.sort());
  assert.is(w.s3.seen.length, seen, "the flags made no store request");
});

t("a store that cannot be reached: one line naming it, exit 2, no stack, no secret", async ({ w }) => {
  const started = Date.now();
  const r = await cli(w.dir, ["review", M, "--outputs", w.url], { ...w.s3.env, AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${await closedPort()}` });
  assert.is(r.exitCode, 2, r.all);
  const lines = r.stderr.trim().split("\n");
  assert.is(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /cannot read the outputs store s3:\/\/results\/review\/demo: /);
  assert.not.match(r.all!, /\n\s+at |AWS SDK|NodeVersionSupportWarning/);
  assert.not.ok(r.all!.includes(w.s3.secretAccessKey));
  assert.is(r.stdout, "", "no page was served");
  assert.ok(Date.now() - started < 60_000, `took ${Date.now() - started} ms`);
});

t.run();
