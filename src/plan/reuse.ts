// Never pay twice across manifests (issue 31): which planned task may take its results
// from a finished, paid task with the same request recorded in some lockfile (this
// manifest's own, another one git tracks in the repository, or one in a `reuse_from`
// folder), and why not otherwise. The same request is the same request hash: intent (the
// exact request, inputs by content), take and attempt; the manifest's name, the job's id
// and the attempt's number in that lockfile do not count, so every attempt number up to the
// highest recorded one is tried. Pure: the lockfiles come in as data and whether a
// source's files are there with their recorded bytes is asked of `files` (the shell,
// src/run/reuseIndex.ts, reads and hashes them, or looks them up in a store's listing).
// A source whose files are gone may still be had from the service by its task id: only
// one of this run's service (same region), while the service holds its results (`held`,
// the shell's retention rule); the run fetches it and checks every file's sha256.

import type { LockTask } from "../state/LockFile.js";
import { cashByCurrency } from "../money/charges.js";
import { describeVars } from "../manifest/outputFolder.js";

/** One lockfile as the index holds it. */
export interface ReuseLockfile {
  /** The lockfile, relative to this manifest's lockfile's folder, `/` separators: as recorded in `reused_from`. */
  readonly label: string;
  /** Its manifest as a person names it (`spring.yaml`), for the plan's note. */
  readonly manifest: string;
  /** This manifest's own lockfile (a renamed manifest or job): preferred. */
  readonly own: boolean;
  /** Its service is this run's (same region): its task ids mean something here. Otherwise only its files are used. */
  readonly sameService: boolean;
  readonly tasks: Readonly<Record<string, LockTask>>;
}

/** A record that may stand in for a planned task. */
export interface ReuseCandidate {
  readonly lockfile: ReuseLockfile;
  readonly id: string;
  readonly record: LockTask;
}

export interface ReuseIndex {
  /** request_hash -> the paid results recorded with it. */
  readonly byHash: ReadonlyMap<string, readonly ReuseCandidate[]>;
  /** The highest attempt number of any indexed record (attempts are few). */
  readonly maxAttempt: number;
}

/** What the shell found of a candidate's files: every one present with its recorded sha256, or why not. */
export type FilesVerdict =
  | {
      readonly ok: true;
      /** Recorded path (in the source's outputs) -> where the file is, for the copy: a local path, or a key relative to `store`. */
      readonly files: ReadonlyMap<string, string>;
      /** The source's outputs store (`s3://bucket/prefix`), when its files are objects there. */
      readonly store?: string;
    }
  | { readonly ok: false; readonly why: "files gone" | "other bytes" };

/**
 * Whether the service still holds a record's results, by its task id: the shell's rule
 * (the service's 30 days, outputs/resultState.ts `pastRetention`), asked only of records
 * of this run's service with a task id. Absent: the service is not asked at all.
 */
export type ServiceHolds = (record: LockTask) => boolean;

/** Where a reused task's results come from. */
export interface ReuseSource {
  readonly lockfile: string;
  readonly manifest: string;
  readonly id: string;
  readonly record: LockTask;
  /** Its task id may be recorded here (same service): the service can give fresh links to its results. */
  readonly sameService: boolean;
  /** When the source was paid (Unix ms), when known. */
  readonly paidAt?: number;
  /** What it cost when paid, in one currency, when its billing says. */
  readonly cost?: { readonly amount: string; readonly currency: string };
  /** Recorded path -> file to copy from (a local path, or a key relative to `store`); empty when fetched from the service. */
  readonly files: ReadonlyMap<string, string>;
  /** The source's outputs store, when `files` are objects there. */
  readonly store?: string;
  /** Its files are gone: the run fetches them from the service by the source's task id (same service, within its retention). */
  readonly fetch?: true;
  /** For plan and status: `reused: same request as spring.yaml stills product=A-1, paid 2026-11-20`. */
  readonly note: string;
}

/** The answer for one planned task: reused from a source, not reused and why (a match exists), or undefined (no match at all). */
export type ReuseDecision = { readonly reuse: ReuseSource } | { readonly why: string } | undefined;

const MAIN = (o: LockTask["outputs"][number]): boolean => o.variant === "main" && (o.type === "image" || o.type === "video");

/**
 * Whether a record is a finished, paid result that can stand for a task elsewhere:
 * downloaded (or succeeded with its files recorded), at least one main result and every
 * main result with its file and sha256, not replaced, pruned or abandoned.
 */
export const paidResult = (t: LockTask): boolean => {
  if (t.state !== "downloaded" && t.state !== "succeeded") return false;
  if (t.superseded_by !== undefined || t.pruned_at !== undefined || t.abandoned !== undefined) return false;
  let main = 0;
  for (const o of t.outputs) {
    if (!MAIN(o)) continue;
    if (o.path === undefined || o.sha256 === undefined) return false;
    main++;
  }
  return main > 0;
};

/** When the record's result was paid: the source's own time for a record that was itself reused. */
export const paidAt = (t: LockTask): number | undefined => t.reused_from?.paid_at ?? t.finished_at ?? t.created_at;

/** What the record's result cost when it was paid, in one named currency; a reused record: what its source cost. */
export const costOf = (t: LockTask): { amount: string; currency: string } | undefined => {
  if (t.reused_from !== undefined) return t.reused_from.cost;
  const cash = Object.entries(cashByCurrency([t.billing]));
  // A charge that names no currency (an image-only account, no prices: listed under "") has none to record.
  return cash.length === 1 && cash[0]![0] !== "" ? { currency: cash[0]![0], amount: cash[0]![1] } : undefined;
};

/** The index of these lockfiles' paid results by request hash. Pure. */
export const indexLockfiles = (lockfiles: readonly ReuseLockfile[]): ReuseIndex => {
  const byHash = new Map<string, ReuseCandidate[]>();
  let maxAttempt = 1;
  for (const lockfile of lockfiles) {
    for (const id in lockfile.tasks) {
      const record = lockfile.tasks[id]!;
      if (!paidResult(record)) continue;
      if (record.attempt > maxAttempt) maxAttempt = record.attempt;
      const list = byHash.get(record.request_hash);
      if (list) list.push({ lockfile, id, record });
      else byHash.set(record.request_hash, [{ lockfile, id, record }]);
    }
  }
  return { byHash, maxAttempt };
};

/** Preference: this manifest's own lockfile, then the newest paid, then by lockfile and id (the same answer whatever the order lockfiles were read in). */
export const preferred = (a: ReuseCandidate, b: ReuseCandidate): number => {
  if (a.lockfile.own !== b.lockfile.own) return a.lockfile.own ? -1 : 1;
  const pa = paidAt(a.record) ?? -1;
  const pb = paidAt(b.record) ?? -1;
  if (pa !== pb) return pb - pa;
  if (a.lockfile.label !== b.lockfile.label) return a.lockfile.label < b.lockfile.label ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
};

const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** `spring.yaml stills product=A-1 style=studio`: the source as a person finds it. */
const sourceText = (c: ReuseCandidate): string => {
  const vars = Object.keys(c.record.vars).length ? ` ${describeVars(c.record.vars)}` : "";
  return `${c.lockfile.manifest} ${c.record.job}${vars}`;
};

/**
 * Which source a planned task reuses, if any. `hashOf(a)`: the task's request hash at
 * attempt `a` (requestHash(intent, take, a)); `off`: reuse is turned off for it (`reuse:
 * false` on its job or the manifest, `--no-reuse`). Candidates are tried in `preferred`
 * order; the first whose files are all there with their recorded bytes is the source.
 */
export const reuseFor = (
  hashOf: (attempt: number) => string,
  index: ReuseIndex,
  files: (c: ReuseCandidate) => FilesVerdict,
  off = false,
  held?: ServiceHolds,
): ReuseDecision => {
  const found: ReuseCandidate[] = [];
  for (let a = 1; a <= index.maxAttempt; a++) {
    const list = index.byHash.get(hashOf(a));
    if (list) found.push(...list);
  }
  if (found.length === 0) return undefined;
  found.sort(preferred);
  if (off) return { why: `not reused (reuse is off): same request as ${sourceText(found[0]!)}` };
  let why: "files gone" | "other bytes" = "files gone";
  for (const c of found) {
    const verdict = files(c);
    if (!verdict.ok) {
      // "other bytes" is the stronger warning: said when any candidate's file was changed.
      if (verdict.why === "other bytes") why = "other bytes";
      continue;
    }
    return { reuse: sourceOf(c, verdict.files, verdict.store) };
  }
  // No files anywhere: the service may still hold the results of one of this service's tasks.
  const atService = held === undefined ? [] : found.filter((c) => c.lockfile.sameService && c.record.task_id !== undefined);
  const kept = atService.find((c) => held!(c.record));
  if (kept !== undefined) return { reuse: { ...sourceOf(kept, new Map(), undefined, true), fetch: true } };
  const what = why === "other bytes" ? "its files have other bytes than recorded" : "its files are gone";
  const past = why === "files gone" && atService.length > 0 ? ", past the service's 30 days" : "";
  return { why: `not reused (${why}${past}): same request as ${sourceText(found[0]!)}, but ${what}${past ? " and the service no longer holds them" : ""}` };
};

const sourceOf = (c: ReuseCandidate, files: ReadonlyMap<string, string>, store: string | undefined, fetch = false): ReuseSource => {
  const paid = paidAt(c.record);
  const cost = costOf(c.record);
  return {
    lockfile: c.lockfile.label,
    manifest: c.lockfile.manifest,
    id: c.id,
    record: c.record,
    sameService: c.lockfile.sameService,
    ...(paid !== undefined ? { paidAt: paid } : {}),
    ...(cost ? { cost } : {}),
    files,
    ...(store !== undefined ? { store } : {}),
    note: `reused: same request as ${sourceText(c)}${paid !== undefined ? `, paid ${day(paid)}` : ""}${fetch ? ", fetched again from the service by its task id" : ""}`,
  };
};
