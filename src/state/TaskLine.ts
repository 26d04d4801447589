// One task as one line of a lockfile (and of its journal), format version 3 written,
// versions 2 and 3 read: the in-memory LockTask, minus what the line's own other fields
// and the file's header already determine, with times as offsets. Pure. A field is left
// out only when the decoder's derivation gives back exactly the value the task had, so
// decode(encode(t)) equals t for every task; src/state/README.md lists each derivation.
// The derivations are part of the format: they never change meaning within a version
// (version 3 gave two absent fields a meaning, so a line is decoded with the rules of
// the version its file or journal header names).

import type { BillingEntry } from "../protocol/wire.js";
import type { LockOutput, LockTask } from "./LockFile.js";
import { sortKeys } from "./stableJson.js";
import { isUnixMs } from "../protocol/UnixMs.js";

/**
 * The rules a line was written with: the lockfile version (2 or 3) of its file, or of the
 * file a journal of that version belongs to (journal 2: lockfile 2, journal 3: lockfile 3).
 * Version 3 adds two rules: `state` left out means `downloaded`; an output with neither
 * `file` nor `path` has its default file name (`"file": null` when it has no file).
 */
export type LineRules = 2 | 3;

/** The rules lines are written with. */
export const LINE_RULES = 3 satisfies LineRules;

/** A task line as JSON data (schemas/lockfile.schema.json, `$defs/taskLine`). */
export interface TaskLine {
  readonly id: string;
  readonly job?: string;
  readonly kind: LockTask["kind"];
  /** Required in version 2; in version 3 left out when `downloaded`. */
  readonly state?: LockTask["state"];
  readonly take?: number;
  readonly attempt?: number;
  readonly task_id?: string;
  /** [updated_at, then updated_at minus planned_at, submitted_at, created_at, finished_at (null when absent)]. */
  readonly at: readonly (number | null)[];
  readonly hash?: string;
  readonly hash_rest?: string;
  readonly dir?: string;
  readonly vars?: Record<string, unknown>;
  readonly out?: readonly OutputLine[];
  readonly bill?: readonly BillLine[];
  readonly error?: LockTask["error"];
  readonly upstream?: LockTask["upstream"];
  readonly superseded_by?: string;
  readonly abandoned?: LockTask["abandoned"];
  readonly pruned_at?: number;
  readonly reused_from?: LockTask["reused_from"];
}

interface OutputLine {
  readonly type?: LockOutput["type"];
  readonly index?: number;
  readonly variant?: LockOutput["variant"];
  /** null (version 3): the output has no file. */
  readonly file?: string | null;
  readonly path?: string;
  readonly size?: number;
  readonly sha256?: string;
  readonly remote_id?: string;
  readonly group_id?: string;
  readonly deleted_at?: number;
  readonly etag?: string;
  readonly meta?: Record<string, unknown>;
}

/** A billing entry: its amount under its charge type's name (`cash` or `unit`), list_price as `list`. */
type BillLine = Omit<BillingEntry, "charge_type" | "amount" | "list_price"> & {
  readonly cash?: string;
  readonly unit?: string;
  readonly list?: string;
};

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
// Char code -> base32 value (-1: not base32); a table, as this runs once per task on load.
const BASE32_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE32.length; i++) BASE32_VALUE[BASE32.charCodeAt(i)] = i;
const HEX_CODES = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));

/**
 * `parts` as one flat string. Strings joined with `+` or a template are kept as a tree of
 * their parts until used whole; a decoded task keeps its hash, folder and paths for the
 * whole run, so they are made whole here (Array.join makes one string).
 */
const joined = (parts: readonly string[], separator: string): string => parts.join(separator);

/**
 * The 25 hex digits an id's last 20 characters spell in base32 (5 bits each), or
 * undefined when they are not base32: an id `<name>-<job>-<hash>` carries the first 100
 * bits of its request hash that way, so the line stores only the rest.
 */
export const idHashHex = (id: string): string | undefined => {
  if (id.length < 21 || id.charCodeAt(id.length - 21) !== 45 /* - */) return undefined;
  // Char codes made into one string at the end: `+=` per digit left a chain of a dozen
  // joined strings in every decoded request hash (about 400 bytes a task, kept for the run).
  const hex: number[] = [];
  let acc = 0;
  let bits = 0;
  for (let i = id.length - 20; i < id.length; i++) {
    const code = id.charCodeAt(i);
    const v = code < 128 ? BASE32_VALUE[code]! : -1;
    if (v < 0) return undefined;
    acc = ((acc << 5) | v) & 0x1ff;
    bits += 5;
    if (bits >= 8) {
      hex.push(HEX_CODES[(acc >>> (bits - 4)) & 15]!, HEX_CODES[(acc >>> (bits - 8)) & 15]!);
      bits -= 8;
    } else if (bits >= 4) {
      hex.push(HEX_CODES[(acc >>> (bits - 4)) & 15]!);
      bits -= 4;
    }
  }
  return String.fromCharCode(...hex);
};

/** The job an id `<name>-<job>-<20 characters>` names, or undefined. */
export const idJob = (name: string, id: string): string | undefined =>
  idNamesJob(name, id) ? id.slice(name.length + 1, id.length - 21) : undefined;

/** Whether idJob(name, id) names a job, without making its string (every line of a large file asks). */
export const idNamesJob = (name: string, id: string): boolean =>
  id.length > name.length + 22 && id.startsWith(name) && id.charCodeAt(name.length) === 45 /* - */ && id.charCodeAt(id.length - 21) === 45;

/** The folder a task's matrix values name by default: `<job>/<values in key order, joined with _>`. */
export const defaultDir = (job: string, vars: Readonly<Record<string, unknown>>): string => {
  const keys = Object.keys(vars);
  if (keys.length === 0) return joined([job, ""], "/");
  // A line's vars are written in key order (encodeTaskLine): sorted only when they are not.
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  }
  if (keys.length === 1) return joined([job, String(vars[keys[0]!])], "/");
  // One join: `<job>/<first>` and the other values, with `_` between.
  const parts = new Array<string>(keys.length);
  parts[0] = `${job}/${String(vars[keys[0]!])}`;
  for (let i = 1; i < keys.length; i++) parts[i] = String(vars[keys[i]!]);
  return joined(parts, "_");
};

/**
 * The name the downloader gives an output when the manifest names none (manifest/fileNames.ts
 * `fileNameFor` with `usualExtension`): `<type>-<index + 1>[.watermark].<ext>`, ext `mp3` / `wav`
 * for those variants, else `mp4` for a video and `png` for an image; undefined for other
 * types (metadata only). A format rule of version 3, written out here so that it never
 * changes with the downloader (a test checks the two agree today).
 */
export const defaultFileName = (o: Pick<LockOutput, "type" | "index" | "variant">): string | undefined => {
  const ext = o.variant === "mp3" ? "mp3" : o.variant === "wav" ? "wav" : o.type === "video" ? "mp4" : o.type === "image" ? "png" : undefined;
  return ext === undefined ? undefined : `${o.type}-${o.index + 1}${o.variant === "watermark" ? ".watermark" : ""}.${ext}`;
};

/**
 * What a line breaks of its version's rules beyond the schema (which accepts both
 * versions' lines), or undefined: a version-2 line must name its state and cannot hold
 * `"file": null`.
 */
export const lineRuleProblem = (line: TaskLine, rules: LineRules): string | undefined => {
  if (rules === 3) return undefined;
  if (line.state === undefined) return "`state` is required in lockfile version 2";
  if (line.out?.some((o) => o.file === null)) return '`"file": null` is not part of lockfile version 2';
  return undefined;
};

/** The line of `task` (keyed `id`) in a file whose header names `name`: one JSON object, no newline, version-3 rules. */
export const encodeTaskLine = (name: string, id: string, task: LockTask): string => {
  const vars = sortKeys(task.vars) as Record<string, unknown>;
  const line: Record<string, unknown> = { id };
  if (idJob(name, id) !== task.job) line.job = task.job;
  line.kind = task.kind;
  if (task.state !== "downloaded") line.state = task.state;
  if (task.take !== 1) line.take = task.take;
  if (task.attempt !== 1) line.attempt = task.attempt;
  if (task.task_id !== undefined) line.task_id = task.task_id;
  const u = task.updated_at;
  const at: (number | null)[] = [u];
  for (const t of [task.planned_at, task.submitted_at, task.created_at, task.finished_at]) at.push(t === undefined ? null : u - t);
  while (at.at(-1) === null) at.pop();
  line.at = at;
  const head = idHashHex(id);
  if (head !== undefined && task.request_hash.length > head.length && task.request_hash.startsWith(head)) {
    line.hash_rest = task.request_hash.slice(head.length);
  } else line.hash = task.request_hash;
  if (task.dir !== defaultDir(task.job, vars)) line.dir = task.dir;
  if (Object.keys(vars).length > 0) line.vars = vars;
  if (task.outputs.length > 0) line.out = task.outputs.map((o, i) => encodeOutput(task, o, i));
  if (task.billing.length > 0) line.bill = task.billing.map(encodeBill);
  if (task.error !== undefined) line.error = sortKeys(task.error);
  if (task.upstream !== undefined) line.upstream = sortKeys(task.upstream);
  if (task.superseded_by !== undefined) line.superseded_by = task.superseded_by;
  if (task.abandoned !== undefined) line.abandoned = { service: task.abandoned.service, at: task.abandoned.at };
  if (task.pruned_at !== undefined) line.pruned_at = task.pruned_at;
  if (task.reused_from !== undefined) line.reused_from = sortKeys(task.reused_from);
  return JSON.stringify(line);
};

const encodeOutput = (task: LockTask, o: LockOutput, position: number): OutputLine => {
  const out: Record<string, unknown> = {};
  if (o.type !== task.kind) out.type = o.type;
  if (o.index !== position) out.index = o.index;
  if (o.variant !== "main") out.variant = o.variant;
  const fallback = defaultFileName(o);
  if (o.path === undefined) {
    if (fallback !== undefined) out.file = null;
  } else if (o.path.startsWith(`${task.dir}/`) && o.path.length > task.dir.length + 1) {
    const file = o.path.slice(task.dir.length + 1);
    if (file !== fallback) out.file = file;
  } else out.path = o.path;
  if (o.size !== undefined) out.size = o.size;
  if (o.sha256 !== undefined) out.sha256 = o.sha256;
  if (o.remote_id !== undefined) out.remote_id = o.remote_id;
  if (o.group_id !== undefined) out.group_id = o.group_id;
  if (o.deleted_at !== undefined) out.deleted_at = o.deleted_at;
  if (o.etag !== undefined) out.etag = o.etag;
  if (o.meta !== undefined) out.meta = sortKeys(o.meta);
  return out;
};

const encodeBill = (b: BillingEntry): BillLine => {
  const { charge_type, amount, list_price, ...rest } = b;
  return { [charge_type]: amount, ...(list_price !== undefined ? { list: list_price } : {}), ...(sortKeys(rest) as object) };
};

/**
 * Strings the caller already holds for a task (the manifest's plan of it: its id and
 * request hash). A record decoded with them uses the caller's string wherever its own
 * value is equal, so a rerun keeps one copy of each, not one in the plan and one in the
 * record (100,000 tasks: 13 MB). Values are compared, never assumed. Not the folder: the
 * plan's is a joined string (a template), and the record's flat one was cheaper for the
 * rerun's many lookups by folder (sharing it cost 0.5 to 1 s of CPU over 100,000 tasks).
 */
export interface KnownStrings {
  readonly id: string;
  /** The request hash (a planned task's field name: a PlannedTask is a KnownStrings). */
  readonly requestHash: string;
}

/**
 * The line's request hash: `hash`, or the head its id spells and `hash_rest`; the caller's
 * string (`known`) when equal, compared in place, so the usual line joins no second copy.
 */
const requestHashOf = (id: string, line: TaskLine, known: KnownStrings | undefined): string => {
  if (line.hash !== undefined) return known !== undefined && known.requestHash === line.hash ? known.requestHash : line.hash;
  // An id that spells no head (a hand-edited line) joins nothing before the rest, as ever.
  const head = idHashHex(id) ?? "";
  const rest = line.hash_rest!;
  const k = known?.requestHash;
  if (k !== undefined && k.length === head.length + rest.length && k.startsWith(head) && k.endsWith(rest)) return k;
  return joined([head, rest], "");
};

/** The last one-entry billing decoded, and the line it came from (see billingOf). */
let lastBill: { readonly line: BillLine; readonly billing: readonly BillingEntry[] } | undefined;

/**
 * A line's billing. A batch's tasks are mostly charged alike, one after the other in the
 * file: a one-entry list equal to the one before (field by field) is that same list, so
 * 100,000 records hold one list and one entry, not one each. Shared lists and entries are
 * frozen: records are replaced, never edited, and a change would throw, not reach another task.
 */
const billingOf = (bills: readonly BillLine[]): readonly BillingEntry[] => {
  if (bills.length !== 1) return bills.map(decodeBill);
  const b = bills[0]!;
  // The fields decodeBill reads decide the entry (its keys and their order too).
  const last = lastBill?.line;
  if (
    last !== undefined &&
    last.cash === b.cash &&
    last.unit === b.unit &&
    last.list === b.list &&
    last.cash_type === b.cash_type &&
    last.currency === b.currency &&
    last.package_type === b.package_type
  ) {
    return lastBill!.billing;
  }
  const billing = Object.freeze([Object.freeze(decodeBill(b))]);
  lastBill = { line: b, billing };
  return billing;
};

/**
 * The task a line describes (the line already checked against `$defs/taskLine` and
 * `lineRuleProblem`), by the rules of the version it was written with (default: the
 * current one). Straight-line code on purpose: it runs once per task when a lockfile loads
 * (100,000 tasks for a large batch), and object rest/spread and per-key loops cost several times more.
 * `known`: the caller's strings for this id (KnownStrings), used where equal.
 */
export const decodeTaskLine = (name: string, line: TaskLine, rules: LineRules = LINE_RULES, known?: KnownStrings): { id: string; task: LockTask } => {
  const id = known !== undefined && known.id === line.id ? known.id : line.id;
  const job = line.job ?? idJob(name, id)!;
  const vars = line.vars ?? {};
  const dir = line.dir ?? defaultDir(job, vars);
  const requestHash = requestHashOf(id, line, known);
  const at = line.at;
  const u = at[0] as number;
  const task: { -readonly [K in keyof LockTask]: LockTask[K] } = {
    job,
    kind: line.kind,
    vars,
    dir,
    request_hash: requestHash,
    take: line.take ?? 1,
    attempt: line.attempt ?? 1,
    state: line.state ?? "downloaded",
    updated_at: u,
    outputs: line.out === undefined ? [] : line.out.map((o, i) => decodeOutput(line.kind, dir, o, i, rules)),
    billing: line.bill === undefined ? [] : billingOf(line.bill),
  };
  if (line.task_id !== undefined) task.task_id = line.task_id;
  // A time no Date can show (an older version recorded a service's create_time of 1e300)
  // is read as unknown: it would break every report and the 30-day deletion reckoning.
  if (at.length > 1 && at[1] !== null && isUnixMs(u - at[1]!)) task.planned_at = u - at[1]!;
  if (at.length > 2 && at[2] !== null && isUnixMs(u - at[2]!)) task.submitted_at = u - at[2]!;
  if (at.length > 3 && at[3] !== null && isUnixMs(u - at[3]!)) task.created_at = u - at[3]!;
  if (at.length > 4 && at[4] !== null && isUnixMs(u - at[4]!)) task.finished_at = u - at[4]!;
  if (line.error !== undefined) task.error = line.error;
  if (line.upstream !== undefined) task.upstream = line.upstream;
  if (line.superseded_by !== undefined) task.superseded_by = line.superseded_by;
  if (line.abandoned !== undefined) task.abandoned = line.abandoned;
  if (line.pruned_at !== undefined) task.pruned_at = line.pruned_at;
  if (line.reused_from !== undefined) task.reused_from = line.reused_from;
  return { id, task };
};

const decodeOutput = (kind: LockTask["kind"], dir: string, o: OutputLine, position: number, rules: LineRules): LockOutput => {
  const out: { -readonly [K in keyof LockOutput]: LockOutput[K] } = { type: o.type ?? kind, index: o.index ?? position, variant: o.variant ?? "main" };
  if (typeof o.file === "string") out.path = joined([dir, o.file], "/");
  else if (o.path !== undefined) out.path = o.path;
  else if (o.file === undefined && rules === 3) {
    const fallback = defaultFileName(out);
    if (fallback !== undefined) out.path = joined([dir, fallback], "/");
  }
  if (o.size !== undefined) out.size = o.size;
  if (o.sha256 !== undefined) out.sha256 = o.sha256;
  if (o.remote_id !== undefined) out.remote_id = o.remote_id;
  if (o.group_id !== undefined) out.group_id = o.group_id;
  if (o.deleted_at !== undefined) out.deleted_at = o.deleted_at;
  if (o.etag !== undefined) out.etag = o.etag;
  if (o.meta !== undefined) out.meta = o.meta;
  return out;
};

const decodeBill = (b: BillLine): BillingEntry => {
  const bill: BillingEntry = b.cash !== undefined ? { charge_type: "cash", amount: b.cash } : { charge_type: "unit", amount: b.unit! };
  if (b.cash_type !== undefined) bill.cash_type = b.cash_type;
  if (b.currency !== undefined) bill.currency = b.currency;
  if (b.package_type !== undefined) bill.package_type = b.package_type;
  if (b.list !== undefined) bill.list_price = b.list;
  return bill;
};
