// `validate --check-urls`: asks the hosts of remote inputs whether they are there
// (HEAD, bounded in time), and probes remote videos through ranged GETs of their box
// headers. Each URL is checked once, however many tasks use it. Off by default: plain
// validation sends nothing over the network.

import { checkVideoMedia, describeProbeFailure, probeVideoHeader } from "../rules/index.js";
import type { Diagnostic } from "./Diagnostic.js";
import type { FieldPlaces } from "./expandJob.js";
import type { Locator } from "./Locator.js";
import type { PlannedTask } from "./PlannedTask.js";

const TIMEOUT_MS = 10_000;
const PARALLEL = 8;
/** A manifest with more distinct URLs than this is checked on a sample. */
const MAX_URLS = 1000;
const IMAGE_MAX_BYTES = { video: 50 * 1024 * 1024, image: 10 * 1024 * 1024 };

interface Use {
  readonly url: string;
  readonly kind: "image" | "video";
  readonly side: "video" | "image";
  readonly job: string;
  readonly field: string;
}

const usesOf = (task: PlannedTask): Use[] => {
  const out: Use[] = [];
  const isUrl = (s: string) => /^https?:\/\//i.test(s);
  if (task.kind === "video") {
    task.request.contents.forEach((c, i) => {
      if ("url" in c && isUrl(c.url)) {
        const video = c.type === "feature_video" || c.type === "base_video";
        out.push({ url: c.url, kind: video ? "video" : "image", side: "video", job: task.job, field: `contents[${i}].url` });
      }
    });
  } else {
    task.request.image_list?.forEach((img, i) => {
      if (isUrl(img.image)) out.push({ url: img.image, kind: "image", side: "image", job: task.job, field: `image_list[${i}].image` });
    });
  }
  return out;
};

const fetchWithTimeout = (url: string, init: RequestInit): Promise<Response> =>
  fetch(url, { ...init, redirect: "follow", signal: AbortSignal.timeout(TIMEOUT_MS) });

const checkOne = async (use: Use): Promise<string[]> => {
  let head: Response;
  try {
    head = await fetchWithTimeout(use.url, { method: "HEAD" });
    // Some hosts refuse HEAD; a one-byte ranged GET answers the same question.
    if (head.status === 405 || head.status === 403) {
      head = await fetchWithTimeout(use.url, { method: "GET", headers: { range: "bytes=0-0" } });
      await head.body?.cancel();
    }
  } catch (error) {
    const e = error as Error;
    return [`${use.kind} URL ${use.url} could not be reached (${e.name === "TimeoutError" ? `no answer in ${TIMEOUT_MS / 1000} s` : e.message})`];
  }
  if (!head.ok) return [`${use.kind} URL ${use.url} answered HTTP ${head.status}`];
  const length = Number(head.headers.get("content-length") ?? NaN);
  if (use.kind === "image") {
    const max = IMAGE_MAX_BYTES[use.side];
    if (Number.isFinite(length) && head.status === 200 && length > max) {
      return [`image at ${use.url} is ${(length / 1048576).toFixed(1)} MB, over the ${max / 1048576} MB limit`];
    }
    return [];
  }
  if (!Number.isFinite(length) || head.status !== 200) return [];
  const readAt = async (offset: number, count: number): Promise<Uint8Array> => {
    const r = await fetchWithTimeout(use.url, { headers: { range: `bytes=${offset}-${offset + count - 1}` } });
    const bytes = new Uint8Array(await r.arrayBuffer());
    // A host that ignores Range sends the whole file: take the part asked for.
    return r.status === 206 ? bytes : bytes.subarray(offset, offset + count);
  };
  try {
    const info = await probeVideoHeader(readAt, length);
    const problems = info.kind === "unreadable" ? [describeProbeFailure(info, use.field, "video")] : checkVideoMedia(info, use.field);
    // The rules name the wire field; the person needs the URL (the position shows the rest).
    return problems.map((v) => `video at ${use.url}: ${v.message.replace(`${use.field}: `, "")}`);
  } catch (error) {
    return [`video at ${use.url} could not be probed (${(error as Error).message})`];
  }
};

export const checkUrls = async (
  tasks: readonly PlannedTask[],
  fieldPlaces: ReadonlyMap<string, FieldPlaces>,
  locator: Locator,
): Promise<Diagnostic[]> => {
  const unique = new Map<string, Use>();
  for (const t of tasks) for (const u of usesOf(t)) if (!unique.has(u.url)) unique.set(u.url, u);
  const queue = [...unique.values()].slice(0, MAX_URLS);
  const out: Diagnostic[] = [];
  const worker = async () => {
    for (let u = queue.shift(); u; u = queue.shift()) {
      for (const message of await checkOne(u)) {
        const places = fieldPlaces.get(u.job);
        out.push(locator.diagnostic(places ? places.get(u.field) : { path: ["jobs", u.job] }, message));
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return out;
};
