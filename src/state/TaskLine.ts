// One task as one line of a version-2 lockfile (and of its journal): the in-memory
// LockTask, minus what the line's own other fields and the file's header already
// determine, with times as offsets. Pure. A field is left out only when the decoder's
// derivation gives back exactly the value the task had, so decode(encode(t)) equals t
// for every task; src/state/README.md lists each derivation. The derivations are part
// of the format: they must never change meaning (a new rule needs a new format version).

import type { BillingEntry } from "../api/wire.js";
import type { LockOutput, LockTask } from "./LockFile.js";
import { sortKeys } from "./stableJson.js";

/** A task line as JSON data (schemas/lockfile.schema.json, `$defs/taskLine`). */
export interface TaskLine {
  readonly id: string;
  readonly job?: string;
  readonly kind: LockTask["kind"];
  readonly state: LockTask["state"];
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
}

interface OutputLine {
  readonly type?: LockOutput["type"];
  readonly index?: number;
  readonly variant?: LockOutput["variant"];
  readonly file?: string;
  readonly path?: string;
  readonly size?: number;
  readonly sha256?: string;
  readonly remote_id?: string;
  readonly group_id?: string;
  readonly meta?: Record<string, unknown>;
}

/** A billing entry: its amount under its charge type's name (`cash` or `unit`), list_price as `list`. */
type BillLine = Omit<BillingEntry, "charge_type" | "amount" | "list_price"> & {
  readonly cash?: string;
  readonly unit?: string;
  readonly list?: string;
};

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/**
 * The 25 hex digits an id's last 20 characters spell in base32 (5 bits each), or
 * undefined when they are not base32: an id `<name>-<job>-<hash>` carries the first 100
 * bits of its request hash that way, so the line stores only the rest.
 */
export const idHashHex = (id: string): string | undefined => {
  if (id.length < 21 || id[id.length - 21] !== "-") return undefined;
  let hex = "";
  let acc = 0;
  let bits = 0;
  for (let i = id.length - 20; i < id.length; i++) {
    const v = BASE32.indexOf(id[i]!);
    if (v < 0) return undefined;
    acc = (acc << 5) | v;
    bits += 5;
    while (bits >= 4) {
      hex += ((acc >>> (bits - 4)) & 15).toString(16);
      bits -= 4;
    }
    acc &= (1 << bits) - 1;
  }
  return hex;
};

/** The job an id `<name>-<job>-<20 characters>` names, or undefined. */
export const idJob = (name: string, id: string): string | undefined =>
  id.length > name.length + 22 && id.startsWith(`${name}-`) && id[id.length - 21] === "-"
    ? id.slice(name.length + 1, id.length - 21)
    : undefined;

/** The folder a task's matrix values name by default: `<job>/<values in key order, joined with _>`. */
export const defaultDir = (job: string, vars: Readonly<Record<string, unknown>>): string =>
  `${job}/${Object.keys(vars)
    .sort()
    .map((k) => String(vars[k]))
    .join("_")}`;

/** The line of `task` (keyed `id`) in a file whose header names `name`: one JSON object, no newline. */
export const encodeTaskLine = (name: string, id: string, task: LockTask): string => {
  const vars = sortKeys(task.vars) as Record<string, unknown>;
  const line: Record<string, unknown> = { id };
  if (idJob(name, id) !== task.job) line.job = task.job;
  line.kind = task.kind;
  line.state = task.state;
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
  return JSON.stringify(line);
};

const encodeOutput = (task: LockTask, o: LockOutput, position: number): OutputLine => {
  const out: Record<string, unknown> = {};
  if (o.type !== task.kind) out.type = o.type;
  if (o.index !== position) out.index = o.index;
  if (o.variant !== "main") out.variant = o.variant;
  if (o.path !== undefined) {
    if (o.path.startsWith(`${task.dir}/`) && o.path.length > task.dir.length + 1) out.file = o.path.slice(task.dir.length + 1);
    else out.path = o.path;
  }
  if (o.size !== undefined) out.size = o.size;
  if (o.sha256 !== undefined) out.sha256 = o.sha256;
  if (o.remote_id !== undefined) out.remote_id = o.remote_id;
  if (o.group_id !== undefined) out.group_id = o.group_id;
  if (o.meta !== undefined) out.meta = sortKeys(o.meta);
  return out;
};

const encodeBill = (b: BillingEntry): BillLine => {
  const { charge_type, amount, list_price, ...rest } = b;
  return { [charge_type]: amount, ...(list_price !== undefined ? { list: list_price } : {}), ...(sortKeys(rest) as object) };
};

/** The task a line describes (the line already checked against `$defs/taskLine`). */
export const decodeTaskLine = (name: string, line: TaskLine): { id: string; task: LockTask } => {
  const { id } = line;
  const job = line.job ?? idJob(name, id)!;
  const vars = line.vars ?? {};
  const dir = line.dir ?? defaultDir(job, vars);
  const [u, planned, submitted, created, finished] = line.at as [number, ...(number | null | undefined)[]];
  const time = (offset: number | null | undefined) => (offset === null || offset === undefined ? undefined : u - offset);
  const task: Record<string, unknown> = {
    job,
    kind: line.kind,
    vars,
    dir,
    request_hash: line.hash ?? `${idHashHex(id)!}${line.hash_rest!}`,
    take: line.take ?? 1,
    attempt: line.attempt ?? 1,
    state: line.state,
    updated_at: u,
    outputs: (line.out ?? []).map((o, i) => decodeOutput(line.kind, dir, o, i)),
    billing: (line.bill ?? []).map(decodeBill),
  };
  if (line.task_id !== undefined) task.task_id = line.task_id;
  const times = { planned_at: time(planned), submitted_at: time(submitted), created_at: time(created), finished_at: time(finished) };
  for (const [key, value] of Object.entries(times)) if (value !== undefined) task[key] = value;
  if (line.error !== undefined) task.error = line.error;
  if (line.upstream !== undefined) task.upstream = line.upstream;
  return { id, task: task as unknown as LockTask };
};

const decodeOutput = (kind: LockTask["kind"], dir: string, o: OutputLine, position: number): LockOutput => {
  const { type, index, variant, file, path, ...rest } = o;
  const full = file !== undefined ? `${dir}/${file}` : path;
  return { type: type ?? kind, index: index ?? position, variant: variant ?? "main", ...(full !== undefined ? { path: full } : {}), ...rest };
};

const decodeBill = (b: BillLine): BillingEntry => {
  const { cash, unit, list, ...rest } = b;
  const price = list !== undefined ? { list_price: list } : {};
  return cash !== undefined ? { charge_type: "cash", amount: cash, ...rest, ...price } : { charge_type: "unit", amount: unit!, ...rest, ...price };
};
