// The review page: the report (src/report/reportHtml.ts) served on 127.0.0.1 with
// approve/reject on each output of a reviewed job, bulk actions on the filtered
// selection and the count left. Everything lives under a random token in the path
// (`http://127.0.0.1:PORT/<token>/`): the page, its media (only files the lockfile
// records, streamed from the outputs folder or store through this server, in ranges for
// a seeking video) and the decision endpoint; any other request gets 404. Loopback only
// unless --host asks; a Host header that is not ours is refused (DNS rebinding). Each
// decision is written to the review file at once, one at a time and under the review
// file's lock (reviewSession.ts), so decisions posted together are all kept. Values go
// into the page by slicing, never as a replacement string. Ctrl-C stops it.

import { randomBytes, timingSafeEqual } from "node:crypto";
import { stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { extname } from "node:path";
import { pipeline } from "node:stream/promises";
import type { CommandIO } from "../Command.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { UsageError } from "../UsageError.js";
import { reportPage } from "../../report/writeReports.js";
import { scriptSafeJson } from "../../report/reportHtml.js";
import type { LockFile } from "../../state/LockFile.js";
import { journalPathOf } from "../../state/LockJournal.js";
import { readLockFile } from "../../state/readLockFile.js";
import { parseRange } from "./byteRange.js";
import type { ReviewMedia } from "./ReviewMedia.js";
import type { ReviewSession } from "./reviewSession.js";
import { countStates } from "../../review/reviewItems.js";
import { REVIEW_CSS, REVIEW_JS } from "./reviewPageScript.js";

export interface ServeOptions {
  readonly io: CommandIO;
  /** Where the media are: the outputs folder or store (ReviewMedia.ts). */
  readonly media: ReviewMedia;
  readonly port?: string;
  readonly host?: string;
  /** Stops the server (tests); SIGINT/SIGTERM do too. */
  readonly signal?: AbortSignal;
  /** Called with the page's address once it listens. */
  readonly onListening?: (url: string) => void;
}

const TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
  ".gif": "image/gif",
  ".mp4": "video/mp4",
  ".webm": "video/webm",
  ".mov": "video/quicktime",
};

const MAX_BODY = 1024 * 1024;
const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error("too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });

const send = (res: ServerResponse, status: number, type: string, body: string) => {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" });
  res.end(body);
};

/**
 * `page` with `text` put in before the first `marker`. By slicing, never with a replacement
 * string: in `String.replace` a `$` pattern of a value (`` $` ``, `$'`, `$&`) would copy
 * parts of the page into it (a result path with `` $` `` broke the review data).
 */
const insertBefore = (page: string, marker: string, text: string): string => {
  const at = page.indexOf(marker);
  if (at < 0) throw new Error(`the report page has no '${marker}'`);
  return page.slice(0, at) + text + page.slice(at);
};

/** The report page with the review controls: fetch to our own origin allowed, the review data and script added. */
const reviewPageHtml = (report: string, data: unknown): string => {
  const withFetch = insertBefore(report, "default-src 'none';", "connect-src 'self'; ");
  const withStyle = insertBefore(withFetch, "</style>", REVIEW_CSS);
  return insertBefore(withStyle, "</body>", `<script type="application/json" id="review-data">${scriptSafeJson(data)}</script>\n<script>${REVIEW_JS}</script>\n`);
};

/** The media files the lockfile records (path -> recorded size): the only ones served. */
export const recordedMedia = (lock: LockFile | undefined): Map<string, number> => {
  const files = new Map<string, number>();
  for (const t of Object.values(lock?.tasks ?? {})) {
    for (const o of t.outputs) if (o.path !== undefined && o.size !== undefined && TYPES[extname(o.path).toLowerCase()]) files.set(o.path, o.size);
  }
  return files;
};

export const serveReview = async (session: ReviewSession, options: ServeOptions): Promise<ExitCode> => {
  const { io, media } = options;
  const host = options.host ?? "127.0.0.1";
  let port = 0;
  if (options.port !== undefined) {
    port = Number(options.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError({ command: "review", message: `--port '${options.port}' must be a whole number from 0 to 65535` });
  }
  const token = randomBytes(24).toString("base64url");
  const prefix = `/${token}/`;
  const tokenOk = (path: string): boolean => {
    const given = Buffer.from(path.slice(1, 1 + token.length));
    return path.length > token.length + 1 && path[token.length + 1] === "/" && given.length === token.length && timingSafeEqual(given, Buffer.from(token));
  };
  let origin = "";
  const hostOk = (req: IncomingMessage): boolean => {
    if (!LOOPBACK.has(host)) return true; // asked for another address: the token guards it
    const h = req.headers.host ?? "";
    const name = h.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
    return LOOPBACK.has(name);
  };

  // The lockfile (and its journal) is read again only when either changed (a run may be
  // going on meanwhile): a page of thumbnails is one read, not one per image.
  let cached: { key: string; lock: LockFile | undefined; files: Map<string, number> } | undefined;
  const stamp = async (path: string) => {
    const st = await stat(path).catch(() => undefined);
    return st ? `${st.mtimeMs}:${st.size}:${st.ino}` : "none";
  };
  const current = async () => {
    const key = `${await stamp(session.lockfilePath)}|${await stamp(journalPathOf(session.lockfilePath))}`;
    if (cached?.key !== key) {
      const lock = await readLockFile(session.lockfilePath);
      cached = { key, lock, files: recordedMedia(lock) };
    }
    return cached;
  };
  // Recorded media not in the folder or store with their recorded size, as of the last
  // page load or state request (a decision does not list the store again).
  let absent = new Set<string>();
  const lookAgain = async () => {
    absent = await media.absent((await current()).files);
  };

  const statePayload = async () => {
    const items = await session.items();
    return {
      jobs: [...session.jobs],
      reviewFile: session.reviewFile,
      where: media.where,
      missing: [...absent].sort(),
      items: items.map((i) => ({ task: i.task, output: i.output, job: i.job, state: i.state, ...(absent.has(i.path) ? { missing: true } : {}) })),
      counts: countStates(items),
    };
  };

  const serveMedia = async (req: IncomingMessage, res: ServerResponse, rest: string): Promise<void> => {
    const size = (await current()).files.get(rest);
    const type = TYPES[extname(rest).toLowerCase()];
    if (size === undefined || !type) return send(res, 404, "text/plain", "not found\n");
    const range = parseRange(typeof req.headers.range === "string" ? req.headers.range : undefined, size);
    const headers = { "content-type": type, "cache-control": "no-store", "x-content-type-options": "nosniff", "accept-ranges": "bytes" };
    if (range === "unsatisfiable") {
      res.writeHead(416, { ...headers, "content-range": `bytes */${size}` });
      return void res.end();
    }
    // The browser going away (a video seeking elsewhere) ends the read from the store too.
    const gone = new AbortController();
    res.once("close", () => gone.abort());
    const head = req.method === "HEAD";
    const opened = await media.open({ path: rest, size, ...(range ? { range } : {}), head, signal: gone.signal });
    if (!opened) {
      absent.add(rest);
      return send(res, 404, "text/plain", "not found\n");
    }
    if (range) res.writeHead(206, { ...headers, "content-length": range.end - range.start + 1, "content-range": `bytes ${range.start}-${range.end}/${size}` });
    else res.writeHead(200, { ...headers, "content-length": size });
    if (head || !opened.body) return void res.end();
    // pipeline destroys the source when the browser goes away, and the response when the source fails.
    await pipeline(opened.body, res).catch(() => undefined);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://x");
    if (!hostOk(req) || !tokenOk(url.pathname)) return send(res, 404, "text/plain", "not found\n");
    let rest: string;
    try {
      rest = decodeURIComponent(url.pathname.slice(prefix.length));
    } catch {
      return send(res, 404, "text/plain", "not found\n"); // malformed %-escapes name nothing we have
    }
    if (req.method === "POST" && rest === "api/decide") {
      // A form or script of another site cannot know the token; a cross-origin request is refused all the same.
      if (req.headers.origin !== undefined && req.headers.origin !== origin) return send(res, 403, "text/plain", "forbidden\n");
      let body: { decision?: unknown; targets?: unknown };
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        return send(res, 400, "text/plain", "bad request\n");
      }
      const decision = body.decision;
      const targets = Array.isArray(body.targets)
        ? body.targets.filter((t): t is { task: string; output: number } => typeof t?.task === "string" && Number.isInteger(t?.output))
        : [];
      if ((decision !== "approved" && decision !== "rejected") || targets.length === 0) return send(res, 400, "text/plain", "bad request\n");
      const changed = await session.decide(targets, decision);
      io.stdout.write(`${decision} ${targets.length} output(s)${changed < targets.length ? ` (${targets.length - changed} already were)` : ""}\n`);
      return send(res, 200, "application/json", JSON.stringify(await statePayload()));
    }
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "text/plain", "method not allowed\n");
    if (rest === "api/state") {
      await lookAgain();
      return send(res, 200, "application/json", JSON.stringify(await statePayload()));
    }
    if (rest === "" || rest === "index.html") {
      const { lock } = await current();
      if (!lock) return send(res, 404, "text/plain", "no lockfile\n");
      await lookAgain();
      const page = reportPage(lock, session.manifest, session.outputsDir, session.emulated);
      return send(res, 200, "text/html; charset=utf-8", reviewPageHtml(page, await statePayload()));
    }
    // Media: only a file the lockfile records (the exact recorded path, with its recorded
    // size), from the outputs folder (never through a link) or store.
    return serveMedia(req, res, rest);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      io.stderr.write(`omnibatch: review page: ${(error as Error).message}\n`);
      if (!res.headersSent) send(res, 500, "text/plain", `${(error as Error).message}\n`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(new UsageError({ command: "review", message: `cannot listen on ${host}:${port}: ${error.code ?? error.message}` })),
    );
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  origin = `http://${shownHost}:${bound}`;
  const url = `${origin}${prefix}`;
  const firstItems = await session.items();
  const first = countStates(firstItems);
  await lookAgain();
  const missing = firstItems.filter((i) => absent.has(i.path)).length;
  io.stdout.write(
    `omnibatch: review page for ${session.manifest.name}${session.emulated ? " (emulated)" : ""}: ${url}\n` +
      `  ${first.awaiting} awaiting review, ${first.approved} approved, ${first.rejected} rejected; decisions go to ${session.reviewFile}\n` +
      `  media from ${media.where}${media.kind === "store" ? " (through this page's server)" : ""}` +
      `${missing > 0 ? `; ${missing} output(s) under review are missing there (shown as missing)` : ""}\n` +
      `  open the address above (it holds the access token); Ctrl-C stops\n`,
  );
  options.onListening?.(url);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    options.signal?.addEventListener("abort", stop, { once: true });
    if (options.signal?.aborted) stop();
  });
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const last = countStates(await session.items());
  io.stdout.write(`omnibatch: review page stopped; ${last.awaiting} awaiting review, ${last.approved} approved, ${last.rejected} rejected (${session.reviewFile})\n`);
  return ExitCode.Ok;
};
