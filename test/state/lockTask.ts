// Builders of realistic lockfile tasks for the state and report tests.

import type { LockTask } from "../../src/state/LockFile.js";

export const task = (n: number, overrides: Partial<LockTask> = {}): LockTask => ({
  job: n % 2 === 0 ? "keyframes" : "clips",
  kind: n % 2 === 0 ? "image" : "video",
  vars: { product: { sku: `A-${n}`, name: `Product ${n}` }, style: n % 3 === 0 ? "studio" : "street" },
  dir: `job/product-A-${n}-style-${n % 3 === 0 ? "studio" : "street"}`,
  request_hash: `h${n.toString(16).padStart(15, "0")}`,
  take: 0,
  attempt: 0,
  state: "planned",
  planned_at: 1_700_000_000_000 + n,
  updated_at: 1_700_000_000_000 + n,
  outputs: [],
  billing: [],
  ...overrides,
});

export const taskId = (n: number): string => `spring-campaign-${n % 2 === 0 ? "keyframes" : "clips"}-${n.toString(36).padStart(8, "0")}`;
