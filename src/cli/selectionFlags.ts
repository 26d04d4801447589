// The flags of a run of a chosen part (--only, --where, --failed) and of saved plans
// (plan --out, run --plan), shared by `plan` and `run`: parsing them into a Selection
// (selection.ts holds the rule), checking them against the manifest, the plan cut down
// to them, what to tell the person before anything is sent, and reading a saved plan.

import { lstat, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { OptionSpec } from "./Command.js";
import { UsageError } from "./UsageError.js";
import type { RunSelection } from "../engine/RunSelection.js";
import { diffPlan, type DiffOptions, type PlanResult } from "../plan/diffPlan.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import type { DecisionIndex } from "../review/reviewDecision.js";
import {
  checkSavedPlan,
  MAX_PLAN_BYTES,
  lockDigest,
  manifestDigest,
  PlanInvalid,
  PlanStale,
  type SavedPlan,
  selectionOfPlan,
} from "../plan/savedPlan.js";
import {
  checkSelection,
  describeSelection,
  isWholeRun,
  keepsEntry,
  keysOf,
  parseOnly,
  parseWhere,
  relevantJobs,
  renewFailedOf,
  selectPlan,
  selectsTask,
  type SelectedPlan,
  type Selection,
  type WhereClause,
} from "../plan/selection.js";
import type { LockFile } from "../state/LockFile.js";
import { writeFileAtomic } from "../state/writeFileAtomic.js";
import { kindOf, readRegularFileSync } from "../manifest/readRegularFile.js";

export const selectionOptions = {
  only: {
    type: "string",
    value: "JOB[,JOB]",
    multiple: true,
    description: "Only these jobs' tasks; upstream jobs do not run (their finished results are used).",
  },
  where: {
    type: "string",
    value: "KEY=VALUE",
    multiple: true,
    description: "Only tasks with this matrix value (dotted paths into data rows: product.sku=A-1); repeat to AND.",
  },
  failed: { type: "boolean", description: "Only failed tasks: one new attempt each (new ids), now, within the budget." },
} as const satisfies Record<string, OptionSpec>;

type Values = Record<string, string | boolean | string[] | undefined>;

const list = (v: unknown): string[] | undefined => (Array.isArray(v) ? v : typeof v === "string" ? [v] : undefined);

/** The selection the flags ask for, or undefined for the whole manifest. */
export const selectionFromArgs = (command: string, values: Values): Selection | undefined => {
  const only = parseOnly(list(values["only"]));
  if (list(values["only"]) !== undefined && only === undefined) {
    throw new UsageError({ command, message: "--only needs job ids, e.g. --only stills or --only stills,clips" });
  }
  const where: WhereClause[] = [];
  for (const text of list(values["where"]) ?? []) {
    const w = parseWhere(text);
    if (typeof w === "string") throw new UsageError({ command, message: w });
    where.push(w);
  }
  const s: Selection = { ...(only ? { only } : {}), where, failed: values["failed"] === true };
  return isWholeRun(s) ? undefined : s;
};

/**
 * The plan (cut down to the selection when there is one), after checking the selection
 * against the manifest: an unknown job or key is a UsageError naming those there are.
 */
export const selectedPlan = (
  command: string,
  m: LoadedManifest,
  lock: LockFile | undefined,
  s: Selection | undefined,
  reviews?: DecisionIndex,
  /** Reuse across manifests (diffPlan's `reusable`): the part's reused tasks stay `=` with their source. */
  reusable?: DiffOptions["reusable"],
): PlanResult | SelectedPlan => {
  const reuse = reusable ? { reusable } : {};
  if (!s) return diffPlan(m, lock, { ...(reviews ? { reviews } : {}), ...reuse });
  return cutPlan(command, m, diffPlan(m, lock, { ...renewFailedOf(s, (t) => selectsTask(s, t)), ...(reviews ? { reviews } : {}), ...reuse }), s);
};

/**
 * A selection checked against the manifest before a run starts (an unknown job or key:
 * UsageError, exit 2, with nothing written). Keys only downstream tasks have come from the
 * upstream results the lockfile records: only then is the plan made here to look.
 */
export const checkSelectionEarly = async (command: string, m: LoadedManifest, s: Selection, lock: () => Promise<LockFile | undefined>, reviews?: DecisionIndex): Promise<void> => {
  const keys = new Set<string>();
  for (const t of m.tasks) keysOf(t.vars, keys);
  if (checkSelection(s, m.jobs, keys).length === 0) return;
  selectedPlan(command, m, await lock(), s, reviews);
};

/**
 * The whole plan (made with --failed's renewals when `s` has --failed) cut down to the
 * selection, after checking the selection against the manifest and the plan's tasks: an
 * unknown job or key is a UsageError naming those there are.
 */
export const cutPlan = (command: string, m: Pick<LoadedManifest, "tasks" | "jobs">, full: PlanResult, s: Selection): SelectedPlan => {
  const keys = new Set<string>();
  for (const t of m.tasks) keysOf(t.vars, keys);
  for (const e of full.entries) if (e.mark !== "…") keysOf(e.vars, keys);
  const problems = checkSelection(s, m.jobs, keys);
  if (problems.length) throw new UsageError({ command, message: problems.join("\n") });
  return selectPlan(full, s, m.jobs);
};

const money = (m: Readonly<Record<string, string>>): string =>
  Object.entries(m)
    .map(([c, a]) => `${a} ${c}`)
    .join(", ");

/** What to tell the person about a selection before anything is sent (one line each). */
export const selectionLines = (plan: PlanResult | SelectedPlan): string[] => {
  if (!("selection" in plan)) return [];
  const s = plan.selection;
  const now = plan.total["+"] + plan.total["~"];
  const cost = money(plan.estimate);
  const lines = [
    `selection ${describeSelection(s) || "(the whole manifest, from a saved plan)"}: ${now} task(s) to create${cost ? ` (estimated ${cost})` : ""}, ${plan.total["="]} done or in flight${plan.reused ? ` (${plan.reused} of them reused)` : ""}; ${plan.notSelected} task(s) not selected, left as they are`,
  ];
  if (s.failed) {
    lines.push(
      now === 0
        ? "--failed: no failed task to try again"
        : `--failed: ${now} new attempt(s) of failed task(s) (new ids)${cost ? `, estimated ${cost}` : ", no estimate (no prices in the manifest)"}`,
    );
  }
  lines.push(...plan.notes);
  return lines;
};

/** What the engine needs of a selection (and of a saved plan: the ids it may create). */
export const runSelectionOf = (s: Selection, m: LoadedManifest, create?: ReadonlySet<string>): RunSelection => ({
  selects: (task) => selectsTask(s, task),
  relevantJobs: relevantJobs(s, m.jobs),
  failed: s.failed,
  keeps: keepsEntry(s, m.jobs),
  ...(create ? { mayCreate: (id: string) => create.has(id) } : {}),
});

/**
 * A saved plan from disk, checked (PlanInvalid names the file and every problem). Read
 * as a data file is: a regular file only (a FIFO never blocks, a device is not read), at
 * most MAX_PLAN_BYTES, the bound checked while reading.
 */
export const readSavedPlan = async (file: string): Promise<SavedPlan> => {
  const read = readRegularFileSync(file, MAX_PLAN_BYTES);
  if (!read.ok) throw new PlanInvalid({ message: `cannot read the plan ${file}: it ${read.reason}; make it again with 'omnibatch plan M.yaml --out FILE'` });
  const text = read.bytes.toString("utf8");
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new PlanInvalid({ message: `${file} is not JSON (${(error as Error).message}): make it again with 'omnibatch plan M.yaml --out ${file}'` });
  }
  const checked = checkSavedPlan(data);
  if (Array.isArray(checked)) {
    throw new PlanInvalid({ message: `${file} is not a valid saved plan:\n${checked.map((p) => `  ${p}`).join("\n")}` });
  }
  return checked;
};

/**
 * Writes a saved plan (`plan --out FILE`) by rename, as a new file or over a regular one
 * only: a symbolic link, a device (`/dev/full`), a FIFO or a folder at FILE is refused and
 * left as it is (a rename over it would replace it), as is a folder that does not exist.
 * Each is PlanInvalid (exit 2) saying what to do.
 */
export const writeSavedPlan = async (file: string, saved: SavedPlan): Promise<void> => {
  const there = await lstat(file).catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? undefined : error));
  if (there instanceof Error) throw new PlanInvalid({ message: `cannot write the plan to ${file}: ${there.code ?? there.message}` });
  if (there !== undefined && !there.isFile()) {
    const kind = there.isSymbolicLink() ? "a symbolic link" : kindOf(there);
    throw new PlanInvalid({ message: `refusing to write the plan to ${file}: it is ${kind}, not a regular file (left as it is); name a new file, e.g. --out plan.json` });
  }
  try {
    await writeFileAtomic(file, `${JSON.stringify(saved, null, 2)}\n`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" || code === "ENOTDIR" ? `the folder ${dirname(file)} does not exist` : code === "EACCES" || code === "EPERM" ? "permission denied" : (code ?? (error as Error).message);
    throw new PlanInvalid({ message: `cannot write the plan to ${file}: ${why}; name a file in an existing folder, e.g. --out plan.json` });
  }
};

/** The manifest digest a saved plan records (text of the manifest file and its tasks' ids). */
export const digestOfManifest = async (m: LoadedManifest): Promise<string> => manifestDigest(await readFile(m.file, "utf8"), m.tasks);

/**
 * A saved plan against the manifest it is applied to: refused (exit 2) when made for
 * another manifest, another mode, or a manifest that changed since. The lockfile's
 * digest is checked by the run itself, once it holds the lockfile.
 */
export const checkPlanApplies = async (saved: SavedPlan, m: LoadedManifest, emulated: boolean, file: string): Promise<Selection> => {
  if (saved.name !== m.name) {
    throw new PlanStale({ message: `the plan ${file} was made for the manifest named '${saved.name}', not '${m.name}': nothing was sent` });
  }
  if (saved.emulated !== emulated) {
    throw new PlanStale({
      message: `the plan ${file} was made ${saved.emulated ? "with --emulate" : "without --emulate"}: run it ${saved.emulated ? "with" : "without"} --emulate (nothing was sent)`,
    });
  }
  if ((await digestOfManifest(m)) !== saved.digests.manifest) {
    throw new PlanStale({
      message: `the manifest ${m.file} (or a file it reads) changed since the plan ${file} was made: nothing was sent; make the plan again and review it`,
    });
  }
  return selectionOfPlan(saved);
};

export { lockDigest };
