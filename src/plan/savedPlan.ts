// Saved plans (`plan --out plan.json`, `run --plan plan.json`), as Terraform's: the exact
// external ids a run would create now, with their estimates, the selection flags, and
// digests of the manifest (its text and every task id it expands to, which cover data
// files and images by content) and of the lockfile it was made from. A run applies it only
// while both digests still hold. Pure: building, digests, and the check of a file read back.

import { createHash } from "node:crypto";
import * as Data from "effect/Data";
import { canonicalJson } from "../manifest/TaskIdentity.js";
import type { LockFile } from "../state/LockFile.js";
import type { PlanResult } from "./diffPlan.js";
import { parseOnly, parseWhere, type Selection } from "./selection.js";

const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex");

export const SAVED_PLAN_FORMAT = "omnibatch-plan";
/**
 * The largest saved plan read (`run --plan`), as the largest data file: a plan holds
 * about 200 bytes a task, so this is over a million tasks. A plan is read as a data file
 * is (manifest/readRegularFile.ts): a regular file only, the bound checked while reading.
 */
export const MAX_PLAN_BYTES = 256 * 1024 * 1024;
export const SAVED_PLAN_VERSION = 1;

export interface SavedPlanTask {
  readonly id: string;
  readonly job: string;
  readonly vars: Readonly<Record<string, unknown>>;
  readonly estimate?: { readonly currency: string; readonly amount: string };
}

export interface SavedPlan {
  readonly format: typeof SAVED_PLAN_FORMAT;
  readonly version: typeof SAVED_PLAN_VERSION;
  /** The manifest's `name`. */
  readonly name: string;
  /** Made against the emulated lockfile (`plan --emulate`): applies only to `run --emulate`. */
  readonly emulated: boolean;
  /** ISO time it was made (for people; never checked). */
  readonly created_at: string;
  readonly digests: { readonly manifest: string; readonly lockfile: string };
  /** The selection flags it was made with; `run --plan` applies the same. */
  readonly selection: { readonly only?: readonly string[]; readonly where: readonly string[]; readonly failed: boolean };
  /** Exactly the tasks `run --plan` may create, in the plan's order. */
  readonly create: readonly SavedPlanTask[];
  /** Their estimated cost per currency (decimal strings). */
  readonly estimate: Readonly<Record<string, string>>;
}

/** The saved plan is unreadable, malformed, made for another manifest, or cannot be written where asked: exit 2. */
export class PlanInvalid extends Data.TaggedError("PlanInvalid")<{ readonly message: string }> {}

/** The manifest or the lockfile changed since the plan was made: exit 2, nothing sent. */
export class PlanStale extends Data.TaggedError("PlanStale")<{ readonly message: string }> {}

/** The manifest as a plan sees it: its text, and every task id of the jobs without for_each (ids cover each request's content). */
export const manifestDigest = (text: string, tasks: readonly { readonly id: string }[]): string =>
  sha256Hex(canonicalJson({ manifest: sha256Hex(text), tasks: tasks.map((t) => t.id).sort() }));

/** The lockfile's tasks as data (journal included, key order and formatting ignored); no lockfile = none. */
export const lockDigest = (lock: Pick<LockFile, "tasks"> | undefined): string => sha256Hex(canonicalJson(lock?.tasks ?? {}));

export const savePlan = (args: {
  readonly plan: PlanResult;
  readonly name: string;
  readonly emulated: boolean;
  readonly manifestDigest: string;
  readonly lockDigest: string;
  readonly selection?: Selection;
  readonly now: Date;
}): SavedPlan => {
  const s = args.selection;
  return {
    format: SAVED_PLAN_FORMAT,
    version: SAVED_PLAN_VERSION,
    name: args.name,
    emulated: args.emulated,
    created_at: args.now.toISOString(),
    digests: { manifest: args.manifestDigest, lockfile: args.lockDigest },
    selection: {
      ...(s?.only ? { only: s.only } : {}),
      where: (s?.where ?? []).map((w) => `${w.key}=${w.value}`),
      failed: s?.failed === true,
    },
    create: args.plan.entries
      .filter((e) => e.mark === "+" || e.mark === "~")
      .map((e) => ({ id: e.id, job: e.job, vars: e.vars, ...(e.estimate ? { estimate: e.estimate } : {}) })),
    estimate: args.plan.estimate,
  };
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const HEX64 = /^[0-9a-f]{64}$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * A saved plan read back, checked field by field: the plan, or every problem found,
 * each with its JSON path (`/create/3/id: must be a string`).
 */
export const checkSavedPlan = (data: unknown): SavedPlan | string[] => {
  const p: string[] = [];
  const need = (ok: boolean, path: string, what: string) => {
    if (!ok) p.push(`${path}: ${what}`);
  };
  if (!isRecord(data)) return ["/: must be an object (a plan written by 'omnibatch plan --out')"];
  need(data["format"] === SAVED_PLAN_FORMAT, "/format", `must be "${SAVED_PLAN_FORMAT}" (this is not a plan written by 'omnibatch plan --out')`);
  need(data["version"] === SAVED_PLAN_VERSION, "/version", `must be ${SAVED_PLAN_VERSION} (made by another version of omnibatch: make the plan again)`);
  need(typeof data["name"] === "string", "/name", "must be a string");
  need(typeof data["emulated"] === "boolean", "/emulated", "must be true or false");
  need(typeof data["created_at"] === "string", "/created_at", "must be a string");
  const digests = data["digests"];
  if (!isRecord(digests)) p.push("/digests: must be an object {manifest, lockfile}");
  else for (const k of ["manifest", "lockfile"]) need(typeof digests[k] === "string" && HEX64.test(digests[k] as string), `/digests/${k}`, "must be a sha256 (64 hex digits)");
  const sel = data["selection"];
  if (!isRecord(sel)) p.push("/selection: must be an object {only?, where, failed}");
  else {
    const only = sel["only"];
    need(only === undefined || (Array.isArray(only) && only.length > 0 && only.every((j) => typeof j === "string" && j !== "")), "/selection/only", "must be a list of job ids");
    const where = sel["where"];
    if (!Array.isArray(where)) p.push("/selection/where: must be a list of key=value");
    else where.forEach((w, i) => need(typeof w === "string" && typeof parseWhere(w) !== "string", `/selection/where/${i}`, "must be key=value"));
    need(typeof sel["failed"] === "boolean", "/selection/failed", "must be true or false");
  }
  const estimateOk = (e: unknown): boolean => isRecord(e) && typeof e["currency"] === "string" && typeof e["amount"] === "string" && DECIMAL.test(e["amount"]);
  const create = data["create"];
  if (!Array.isArray(create)) p.push("/create: must be a list of tasks");
  else {
    const seen = new Set<string>();
    create.forEach((t, i) => {
      if (!isRecord(t)) return p.push(`/create/${i}: must be an object {id, job, vars, estimate?}`);
      need(typeof t["id"] === "string" && /^[a-z0-9_-]{1,200}$/.test(t["id"]), `/create/${i}/id`, "must be an external task id");
      if (typeof t["id"] === "string") {
        need(!seen.has(t["id"]), `/create/${i}/id`, `'${t["id"]}' is listed twice`);
        seen.add(t["id"]);
      }
      need(typeof t["job"] === "string", `/create/${i}/job`, "must be a string");
      need(isRecord(t["vars"]), `/create/${i}/vars`, "must be an object");
      need(t["estimate"] === undefined || estimateOk(t["estimate"]), `/create/${i}/estimate`, "must be {currency, amount} with a decimal amount");
    });
  }
  const est = data["estimate"];
  need(isRecord(est) && Object.values(est).every((a) => typeof a === "string" && DECIMAL.test(a)), "/estimate", "must map currencies to decimal amounts");
  const known = new Set(["format", "version", "name", "emulated", "created_at", "digests", "selection", "create", "estimate"]);
  for (const k of Object.keys(data)) need(known.has(k), `/${k}`, "is not a field of a saved plan");
  return p.length ? p : (data as unknown as SavedPlan);
};

/** The selection a saved plan was made with. */
export const selectionOfPlan = (plan: SavedPlan): Selection => ({
  ...(plan.selection.only ? { only: parseOnly(plan.selection.only)! } : {}),
  where: plan.selection.where.map((w) => parseWhere(w)).filter((w): w is Exclude<ReturnType<typeof parseWhere>, string> => typeof w !== "string"),
  failed: plan.selection.failed,
});
