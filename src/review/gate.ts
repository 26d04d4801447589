// The gate between a reviewed job and the jobs that use its outputs, pure: which
// upstream items a `for_each` may make tasks from (approved ones only), and how many
// outputs await a person. Planning (the run) and diffPlan (plan) both ask it, so what
// plan shows is what the run does.

import type { UpstreamItem } from "../manifest/PlannedTask.js";
import { type DecisionIndex, reviewStateOf } from "./reviewDecision.js";

export interface GateResult {
  /** The items downstream tasks are made from. */
  readonly pass: UpstreamItem[];
  /** Outputs by state (each output once). */
  readonly approved: number;
  readonly rejected: number;
  readonly awaiting: number;
  /**
   * What the downstream job waits for: outputs awaiting review (`outputs` mode), or
   * upstream tasks with an output awaiting review (`tasks` mode: a task is used once
   * every output of it is decided, with its approved outputs only).
   */
  readonly held: number;
}

export const gateItems = (items: readonly UpstreamItem[], mode: "outputs" | "tasks", decisions: DecisionIndex): GateResult => {
  const state = items.map((i) => reviewStateOf({ task: i.task, output: i.index, sha256: i.sha256 }, decisions));
  let approved = 0;
  let rejected = 0;
  let awaiting = 0;
  for (const s of state) {
    if (s === "approved") approved++;
    else if (s === "rejected") rejected++;
    else awaiting++;
  }
  if (mode === "outputs") {
    return { pass: items.filter((_, i) => state[i] === "approved"), approved, rejected, awaiting, held: awaiting };
  }
  const undecided = new Set(items.filter((_, i) => state[i] === "awaiting").map((i) => i.task));
  const pass = items.filter((item, i) => state[i] === "approved" && !undecided.has(item.task));
  return { pass, approved, rejected, awaiting, held: undecided.size };
};
