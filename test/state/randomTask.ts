// Seeded generators of lockfile tasks of every shape the format knows (ids made as the
// manifest makes them and not, every field present or left out), for the format tests.

import type { LockOutput, LockTask, TaskState } from "../../src/state/LockFile.js";
import { defaultFileName, idHashHex } from "../../src/state/TaskLine.js";

// A small seeded generator: the same tasks on every run.
export const rng = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
const STATES: TaskState[] = ["planned", "submitting", "submitted", "processing", "succeeded", "downloaded", "failed", "rejected"];

export const randomTask = (r: () => number, name: string, n: number): { id: string; task: LockTask } => {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const maybe = <T>(p: number, v: () => T): T | undefined => (r() < p ? v() : undefined);
  const hex = (len: number) => Array.from({ length: len }, () => "0123456789abcdef"[Math.floor(r() * 16)]).join("");
  const job = pick(["stills", "clips", "a-b_c"]);
  const kind = pick(["image", "video"] as const);
  const hash = r() < 0.8 ? hex(64) : pick(["abc", "h".repeat(30), hex(25)]);
  // Mostly ids as the manifest makes them (<name>-<job>-<base32 of the hash>), some not.
  const head = Array.from({ length: 20 }, () => BASE32[Math.floor(r() * 32)]).join("");
  const madeId = `${name}-${job}-${head}`;
  const id = pick([madeId, madeId, `other-${job}-${head}`, `x${n}`, `${name}-${job}`]);
  const request_hash = r() < 0.7 && idHashHex(id) ? idHashHex(id)! + hash.slice(25) : hash;
  const vars = pick<Record<string, unknown>>([{}, { a: n % 7, b: n }, { style: "street", product: { sku: `A-${n}`, name: "P" } }, { z: true, a: "x y" }]);
  const dir = pick([
    `${job}/${Object.keys(vars)
      .sort()
      .map((k) => String(vars[k]))
      .join("_")}`,
    `${job}/custom-${n}`,
    "odd",
  ]);
  const u = 1_790_000_000_000 + Math.floor(r() * 1e9);
  const time = () => u - Math.floor(r() * 100_000) + (r() < 0.1 ? 50_000 : 0);
  const outputs: LockOutput[] = Array.from({ length: pick([0, 1, 1, 2, 4]) }, (_, i) => {
    const o: Record<string, unknown> = {
      type: r() < 0.7 ? kind : pick(["video", "image", "audio", "voice", "element"]),
      index: r() < 0.8 ? i : i + 3,
      variant: pick(["main", "main", "watermark", "mp3", "wav", "meta"]),
    };
    // Paths: the default name (left out in version 3), other names inside dir, outside dir, none.
    if (r() < 0.7) o.path = pick([`${dir}/${defaultFileName(o as unknown as LockOutput) ?? "meta.json"}`, `${dir}/${o.type}-${i + 1}.png`, `${dir}/${o.type}-${i + 1}.jpg`, `elsewhere/${i}.mp4`]);
    if (r() < 0.6) o.size = Math.floor(r() * 1e7);
    if (r() < 0.6) o.sha256 = hex(64);
    if (r() < 0.3) o.remote_id = `r-${hex(8)}`;
    if (r() < 0.1) o.group_id = `g-${hex(4)}`;
    if (r() < 0.15) o.deleted_at = u + Math.floor(r() * 1e9);
    if (r() < 0.2) o.etag = hex(8);
    if (r() < 0.1) o.meta = { name: "Ann", z: [1, { b: 2, a: 1 }] };
    return o as unknown as LockOutput;
  });
  const t: Record<string, unknown> = {
    job,
    kind,
    vars,
    dir,
    request_hash,
    take: pick([0, 1, 1, 1, 2]),
    attempt: pick([0, 1, 1, 3]),
    // Half downloaded (its state left out in version 3), the rest any state.
    state: r() < 0.5 ? "downloaded" : pick(STATES),
    updated_at: u,
    outputs,
    billing: Array.from({ length: pick([0, 1, 1, 2]) }, () =>
      r() < 0.6
        ? { charge_type: "cash", amount: "0.024", ...(r() < 0.5 ? { cash_type: "balance", currency: "USD" } : {}), ...(r() < 0.7 ? { list_price: "0.03" } : {}) }
        : { charge_type: "unit", amount: "2", ...(r() < 0.5 ? { package_type: "image" } : {}) },
    ),
  };
  if (r() < 0.8) t.task_id = `${7_000_000_000_000_000 + n}`;
  for (const key of ["planned_at", "submitted_at", "created_at", "finished_at"]) if (r() < 0.7) t[key] = time();
  if (r() < 0.2) t.error = { message: "busy \"quoted\"\nnew line", at: time(), ...(r() < 0.5 ? { code: 1302 } : {}) };
  if (r() < 0.2) t.upstream = { job: "stills", task: `${name}-stills-${head}`, output: n % 3 };
  if (r() < 0.1) t.abandoned = { service: pick(["https://api-east.example.com/v1", "emulator"]), at: time() };
  if (r() < 0.1) t.superseded_by = `${name}-${job}-${head.split("").reverse().join("")}`;
  // Chosen without r() (the other fields of every task stay as they were), on lines that
  // already have a field the quick check leaves to the schema (taskLineCheck.ts).
  if ((t.error !== undefined || t.abandoned !== undefined) && n % 2 === 1) t.reused_from = { lockfile: "../spring.lock.json", id: `spring-${job}-${head}`, ...(n % 2 ? { paid_at: 1_790_000_000_000 + n, cost: { amount: "0.02", currency: "USD" } } : {}) };
  return { id, task: t as unknown as LockTask };
};

