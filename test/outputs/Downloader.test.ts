// Downloads against a real file system and small hostile servers on loopback: symbolic
// links out of the outputs folder are refused (found before anything is paid for, and
// again at write time), result files are capped in size per output type, and links that
// are not http(s) are never fetched.

import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect, Either, Redacted } from "effect";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { OmniClient } from "../../src/api/OmniClient.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { type DownloadFailed, Downloader, maxDownloadBytes, type FetchRequest, type FetchResult } from "../../src/outputs/Downloader.js";
import { checkOutputsFolder, findEscapingLinks } from "../../src/outputs/OutputsFolderCheck.js";
import { startCannedServer, type CannedServer } from "../api/cannedServer.js";

const test = suite<{ server: CannedServer; root: string }>("outputs", { server: undefined as unknown as CannedServer, root: "" });

test.before(async (ctx) => {
  ctx.server = await startCannedServer();
});
test.after(async (ctx) => {
  await ctx.server.close();
});
test.before.each(async (ctx) => {
  ctx.root = await mkdtemp(join(tmpdir(), "omnibatch-outputs-"));
  ctx.server.seen.length = 0;
  ctx.server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "image/png", "content-length": "4" });
    res.end("png!");
  });
});
test.after.each(async (ctx) => {
  await rm(ctx.root, { recursive: true, force: true });
});

const fetchInto = (server: CannedServer, outputsDir: string, request: Partial<FetchRequest> & { dir: string }, limits = maxDownloadBytes) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(OmniClient.make({ baseUrl: server.url, apiKey: Redacted.make("sk-outputs-test-key") }), (client) =>
        Downloader.make(outputsDir, client, makePolicy(0.001), limits).fetchAll({
          outputs: [{ type: "image", index: 0, variant: "main", url: `${server.url}/_files/1/image-0.png` }],
          previous: [],
          refresh: Effect.succeed([]),
          ...request,
        }),
      ),
    ).pipe(Effect.either),
  );

test("a symbolic link out of the outputs folder is found before anything is paid for, naming the link", async ({ root }) => {
  const outputs = join(root, "out");
  const elsewhere = join(root, "elsewhere");
  await mkdir(join(outputs, "keyframes"), { recursive: true });
  await mkdir(elsewhere);
  await symlink(elsewhere, join(outputs, "clips"));
  await symlink(join(outputs, "keyframes"), join(outputs, "inside-link"));
  const links = await findEscapingLinks(outputs);
  assert.equal(links.map((l) => l.path), ["clips"]);
  const result = await Effect.runPromise(Effect.either(checkOutputsFolder(outputs)));
  assert.ok(Either.isLeft(result));
  const error = (result as Either.Left<{ message: string; _tag: string }, void>).left;
  assert.is(error._tag, "OutputsFolderUnsafe");
  assert.match(error.message, "clips ->");
  assert.match(error.message, "nothing was sent");
  // Narrowed to the run's task folders: a link on the way to one of them is found, others are not looked at.
  assert.equal((await findEscapingLinks(outputs, ["clips/A-1"])).map((l) => l.path), ["clips"]);
  assert.equal(await findEscapingLinks(outputs, ["keyframes/k1"]), []);
  await rm(join(outputs, "clips"));
  assert.ok(Either.isRight(await Effect.runPromise(Effect.either(checkOutputsFolder(outputs)))));
});

test("a download into a folder that is a link out of the outputs folder is refused and writes nothing there", async ({ server, root }) => {
  const outputs = join(root, "out");
  const elsewhere = join(root, "elsewhere");
  await mkdir(outputs);
  await mkdir(elsewhere);
  await symlink(elsewhere, join(outputs, "clips"));
  await writeFile(join(elsewhere, ".image-1.png.1.abcd.part"), "someone else's file");
  const result = await fetchInto(server, outputs, { dir: "clips/A-1" });
  assert.ok(Either.isLeft(result), "the download must fail");
  assert.match((result as Either.Left<{ message: string }, unknown>).left.message, "symbolic link");
  assert.equal(await readdir(elsewhere), [".image-1.png.1.abcd.part"], "nothing written or deleted outside");
  assert.is(server.seen.length, 0, "not even fetched");
});

test("a dangling link inside the outputs folder is refused too", async ({ root }) => {
  const outputs = join(root, "out");
  await mkdir(outputs);
  await symlink(join(root, "nowhere", "deep"), join(outputs, "clips"));
  assert.equal((await findEscapingLinks(outputs)).map((l) => l.path), ["clips"]);
});

test("a result larger than its type's cap is refused from Content-Length, before a byte is written", async ({ server, root }) => {
  const result = await fetchInto(server, root, { dir: "k/1" }, { ...maxDownloadBytes, image: 3 });
  assert.ok(Either.isLeft(result));
  assert.match((result as Either.Left<{ message: string }, unknown>).left.message, "limit of 3 bytes");
  assert.equal(await readdir(join(root, "k", "1")), []);
});

test("an endless body without Content-Length is cut off at the cap and leaves no file", async ({ server, root }) => {
  server.handle((_req, res) => {
    res.writeHead(200, { "content-type": "image/png" });
    const chunk = Buffer.alloc(64 * 1024);
    let sent = 0;
    const pump = () => {
      // Bounded: stops after 64 MiB even if the client never gives up.
      while (sent < 1024 && res.write(chunk)) sent++;
      if (sent < 1024 && !res.destroyed) res.once("drain", pump);
      else res.end();
    };
    res.on("close", () => (sent = 1024));
    pump();
  });
  const result = await fetchInto(server, root, { dir: "k/2" }, { ...maxDownloadBytes, image: 1024 * 1024 });
  assert.ok(Either.isLeft(result));
  assert.match((result as Either.Left<{ message: string }, unknown>).left.message, "growing past");
  assert.equal(await readdir(join(root, "k", "2")), []);
});

test("a result link that is not http(s) is never fetched", async ({ server, root }) => {
  const result = await fetchInto(server, root, { dir: "k/3", outputs: [{ type: "image", index: 0, variant: "main", url: "file:///etc/passwd" }] });
  assert.ok(Either.isLeft(result));
  assert.match((result as Either.Left<{ message: string }, unknown>).left.message, "not an http(s) URL");
  assert.is(server.seen.length, 0);
});

test("a normal download still lands in place", async ({ server, root }) => {
  const result = await fetchInto(server, root, { dir: "k/4" });
  assert.ok(Either.isRight(result), JSON.stringify(result));
  assert.is(await readFile(join(root, "k", "4", "image-1.png"), "utf8"), "png!");
});

// Issue 16: a record of what was made is never erased.
const recorded = { type: "image", index: 0, variant: "main", path: "k/1/image-1.png", size: 4, sha256: "a".repeat(64), remote_id: "r1" } as const;

test("a result the service's answer no longer lists keeps its record, marked deleted at the service, and nothing is fetched", async ({ server, root }) => {
  const result = await fetchInto(server, join(root, "out"), { dir: "k/1", outputs: [], previous: [recorded] });
  assert.ok(Either.isRight(result), JSON.stringify(result));
  const [kept] = (result as Either.Right<DownloadFailed, FetchResult>).right.outputs;
  assert.equal({ ...kept, deleted_at: undefined }, { ...recorded, deleted_at: undefined });
  assert.type(kept!.deleted_at, "number");
  assert.is(server.seen.length, 0);
  // Marked once: a later answer keeps the first date.
  const again = await fetchInto(server, join(root, "out"), { dir: "k/1", outputs: [], previous: [{ ...recorded, deleted_at: 5 }] });
  assert.is((again as Either.Right<DownloadFailed, FetchResult>).right.outputs[0]!.deleted_at, 5);
});

test("a link answering 404 after a fresh query, past the service's 30 days, is a deleted result: its record is kept with the date, the fetch does not fail", async ({ server, root }) => {
  server.handle((_req, res) => {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ code: 1203, message: "results were deleted" }));
  });
  const link = { type: "image", index: 0, variant: "main", url: `${server.url}/_files/1/image-0.png` } as const;
  let queries = 0;
  const result = await fetchInto(server, join(root, "out"), {
    dir: "k/1",
    outputs: [link],
    previous: [recorded],
    refresh: Effect.sync(() => {
      queries++;
      return [link];
    }),
    endedAt: Date.now() - 31 * 86_400_000,
  });
  assert.ok(Either.isRight(result), JSON.stringify(result));
  const out = (result as Either.Right<DownloadFailed, FetchResult>).right.outputs;
  assert.is(out.length, 1);
  assert.is(out[0]!.sha256, recorded.sha256);
  assert.type(out[0]!.deleted_at, "number");
  assert.is(queries, 1, "one fresh query decides");
});

for (const [when, endedAt] of [
  ["a second ago", Date.now() - 1_000],
  ["29 days ago", Date.now() - 29 * 86_400_000],
  ["at a time not known", undefined],
] as const) {
  test(`a link answering 404 after fresh queries, for a task that ended ${when}, is no proof of deletion: the fetch fails (tried again later), nothing is marked deleted`, async ({ server, root }) => {
    server.handle((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: 1203, message: "no such result" }));
    });
    const link = { type: "image", index: 0, variant: "main", url: `${server.url}/_files/1/image-0.png` } as const;
    let queries = 0;
    const result = await fetchInto(server, join(root, "out"), {
      dir: "k/1",
      outputs: [link],
      previous: [recorded],
      refresh: Effect.sync(() => {
        queries++;
        return [link];
      }),
      ...(endedAt !== undefined ? { endedAt } : {}),
    });
    assert.ok(Either.isLeft(result), JSON.stringify(result));
    assert.match((result as Either.Left<DownloadFailed, FetchResult>).left.message, "not reachable yet");
    assert.ok(queries > 1, `a fresh link asked for each try (${queries})`);
  });
}

test("a link answering 404 twice, then the file, for a task that ended a second ago: downloaded, not deleted", async ({ server, root }) => {
  let hits = 0;
  server.handle((_req, res) => {
    if (++hits <= 2) {
      res.writeHead(404, { "content-type": "text/plain" });
      return res.end("not found");
    }
    res.writeHead(200, { "content-type": "image/png", "content-length": "4" });
    res.end("png!");
  });
  const link = { type: "image", index: 0, variant: "main", url: `${server.url}/_files/1/image-0.png` } as const;
  const result = await fetchInto(server, join(root, "out"), { dir: "k/1", outputs: [link], refresh: Effect.succeed([link]), endedAt: Date.now() - 1_000 });
  assert.ok(Either.isRight(result), JSON.stringify(result));
  const out = (result as Either.Right<DownloadFailed, FetchResult>).right.outputs;
  assert.is(out[0]!.deleted_at, undefined);
  assert.is(await readFile(join(root, "out", "k", "1", "image-1.png"), "utf8"), "png!");
});

test("a 404 on a link that a fresh query replaces is not a deletion: the fresh link is fetched", async ({ server, root }) => {
  server.handle((req, res) => {
    if (req.url?.includes("old")) {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ code: 1203, message: "no such result" }));
    }
    res.writeHead(200, { "content-type": "image/png", "content-length": "4" });
    res.end("png!");
  });
  const result = await fetchInto(server, join(root, "out"), {
    dir: "k/1",
    outputs: [{ type: "image", index: 0, variant: "main", url: `${server.url}/_files/old/image-0.png` }],
    previous: [recorded],
    refresh: Effect.succeed([{ type: "image", index: 0, variant: "main", url: `${server.url}/_files/new/image-0.png` }]),
  });
  assert.ok(Either.isRight(result), JSON.stringify(result));
  const out = (result as Either.Right<DownloadFailed, FetchResult>).right.outputs;
  assert.is(out[0]!.deleted_at, undefined);
  assert.is(await readFile(join(root, "out", "k", "1", "image-1.png"), "utf8"), "png!");
});

test("a query that does not show the task at all is no proof of deletion: the download fails and is tried again later", async ({ server, root }) => {
  server.handle((_req, res) => {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ code: 1203, message: "no such result" }));
  });
  const result = await fetchInto(server, join(root, "out"), { dir: "k/1", previous: [recorded], refresh: Effect.succeed(undefined) });
  assert.ok(Either.isLeft(result));
  assert.is((result as Either.Left<DownloadFailed, FetchResult>).left._tag, "DownloadFailed");
});

test.run();
