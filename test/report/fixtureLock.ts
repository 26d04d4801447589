// A lockfile covering every case the reports must handle: two currencies, test quota,
// units of two package types, a failed and a rejected task, one in flight, one whose
// results are about to be deleted, and values that need CSV quoting.

import type { LockFile, LockTask } from "../../src/state/LockFile.js";

const DAY = 24 * 60 * 60 * 1000;
export const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

const base = (job: string, kind: "video" | "image", extra: Partial<LockTask>): LockTask => ({
  job,
  kind,
  vars: {},
  dir: `${job}/x`,
  request_hash: "abc",
  take: 0,
  attempt: 0,
  state: "downloaded",
  updated_at: NOW - DAY,
  created_at: NOW - DAY,
  outputs: [],
  billing: [],
  ...extra,
});

const usd = (amount: string, list: string, cash_type: "balance" | "test_balance" = "balance") =>
  ({ charge_type: "cash", cash_type, amount, currency: "USD", list_price: list }) as const;

export const fixtureLock: LockFile = {
  lockfile_version: 1,
  name: "spring",
  tasks: {
    "spring-clips-a": base("clips", "video", {
      vars: { product: "A-1, \"deluxe\"", style: "street" },
      task_id: "t-a",
      billing: [usd("0.1", "0.2")],
      outputs: [{ type: "video", index: 0, variant: "main", path: "clips/a/0.mp4", size: 1234, sha256: "a".repeat(64) }],
    }),
    "spring-clips-b": base("clips", "video", { task_id: "t-b", billing: [usd("0.2", "0.25")] }),
    "spring-clips-c": base("clips", "video", { task_id: "t-c", billing: [usd("0.7", "1.0"), usd("5.5", "5.5", "test_balance")] }),
    "spring-clips-d": base("clips", "video", {
      task_id: "t-d",
      billing: [{ charge_type: "cash", cash_type: "balance", amount: "1.05", currency: "CNY", list_price: "1.50" }],
    }),
    "spring-keyframes-e": base("keyframes", "image", {
      task_id: "t-e",
      billing: [{ charge_type: "unit", amount: "2", package_type: "image" }],
    }),
    "spring-keyframes-f": base("keyframes", "image", {
      task_id: "t-f",
      billing: [{ charge_type: "unit", amount: "0.5", package_type: "image" }, { charge_type: "unit", amount: "3", package_type: "video" }],
    }),
    "spring-keyframes-g": base("keyframes", "image", {
      state: "failed",
      task_id: "t-g",
      error: { code: 1301, message: "content risk | prompt, rejected", at: NOW - DAY },
    }),
    "spring-keyframes-h": base("keyframes", "image", {
      state: "rejected",
      error: { code: 1201, message: "bad resolution", at: NOW - DAY },
      created_at: undefined,
    }),
    "spring-clips-i": base("clips", "video", { state: "processing", task_id: "t-i", created_at: NOW - 60_000 }),
    "spring-clips-j": base("clips", "video", {
      state: "succeeded",
      task_id: "t-j",
      created_at: NOW - 27 * DAY,
      outputs: [{ type: "video", index: 0, variant: "main", remote_id: "o-j" }],
    }),
  },
};
