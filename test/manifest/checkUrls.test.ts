// validate --check-urls: remote inputs are asked for (HEAD, ranged GETs for videos)
// and problems point at the manifest value, against a loopback file server.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ManifestInvalid } from "../../src/manifest/Diagnostic.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { tempManifest } from "./tempManifest.js";

const media = (name: string) => readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url));
const files: Record<string, Buffer> = {
  "/ok.mp4": media("vid_700x700_3s_24fps.mp4"),
  "/short.mp4": media("vid_700x700_2.9s_24fps.mp4"),
  "/ok.png": media("img_300x300.png"),
};

let server: Server;
let base = "";
const requests: string[] = [];

test.before(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url} ${req.headers.range ?? ""}`);
    const body = files[req.url ?? ""];
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    const range = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? "");
    if (range) {
      const start = Number(range[1]);
      const end = Math.min(Number(range[2]), body.length - 1);
      res.writeHead(206, { "content-length": end - start + 1, "content-range": `bytes ${start}-${end}/${body.length}` });
      res.end(req.method === "HEAD" ? undefined : body.subarray(start, end + 1));
      return;
    }
    res.writeHead(200, { "content-length": body.length });
    res.end(req.method === "HEAD" ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const manifest = (video: string, image: string) => `version: 1
name: urls
jobs:
  v:
    kind: video
    first_frame: ${image}
    videos: { ref: "${video}" }
    prompt: "@first_frame moves like @ref"
`;

test("without --check-urls nothing is fetched", async () => {
  const m = tempManifest(manifest(`${base}/missing.mp4`, `${base}/missing.png`));
  try {
    requests.length = 0;
    await loadManifest(m.file);
    assert.is(requests.length, 0);
  } finally {
    m.cleanup();
  }
});

test("reachable inputs within the rules pass --check-urls", async () => {
  const m = tempManifest(manifest(`${base}/ok.mp4`, `${base}/ok.png`));
  try {
    const loaded = await loadManifest(m.file, { checkUrls: true });
    assert.is(loaded.tasks.length, 1);
    assert.ok(requests.some((r) => r.startsWith("GET /ok.mp4 bytes=")), "the video was probed by ranges");
  } finally {
    m.cleanup();
  }
});

test("a missing image and a too-short video are reported at their manifest values", async () => {
  const m = tempManifest(manifest(`${base}/short.mp4`, `${base}/missing.png`));
  try {
    await loadManifest(m.file, { checkUrls: true });
    assert.unreachable("should be invalid");
  } catch (error) {
    assert.instance(error, ManifestInvalid);
    const d = (error as ManifestInvalid).diagnostics.map((x) => `${x.line}:${x.col} ${x.message}`);
    assert.ok(d.some((x) => x.startsWith("6:18 ") && x.includes("HTTP 404")), d.join("\n"));
    assert.ok(d.some((x) => x.startsWith("7:20 ") && x.includes("from 3 to 10 s")), d.join("\n"));
  } finally {
    m.cleanup();
  }
});

test.run();
