// The settled stamp (lockfile header field `settled`): what a run that found nothing to do
// and every task downloaded recorded about its plan's inputs and what it reported, so the
// next plain run can check those inputs (hashing files, never expanding the manifest) and,
// when all match, report the same without planning (src/run/settledRun.ts). Pure: the
// stamp's shape, its key, and the two decisions (may this run take the fast path; does
// the stamp match what this run observed), each a function of plain values.

import { createHash } from "node:crypto";
import { stableJsonLine } from "./stableJson.js";

/**
 * Bumped whenever planning changes what a manifest plans (expansion, identity hashing,
 * rules, the start event's or the summary's contents): every stamp written before no longer
 * matches, and the next run takes the full path once.
 */
export const SETTLED_PLAN_VERSION = 1;

/** The stamp's own format. */
export const SETTLED_STAMP_FORMAT = 1;

/** Input file recorded as absent (or unreadable) when the plan was made: it must still be. */
export const ABSENT = "absent";

/** What a run's events and summary were, without their times (`at`, `elapsedMs`). */
export interface SettledReplay {
  readonly events: readonly Readonly<Record<string, unknown>>[];
  readonly summary: Readonly<Record<string, unknown>>;
}

export interface SettledStamp {
  readonly format: number;
  /** package version and SETTLED_PLAN_VERSION: `0.1.0+plan1`. */
  readonly tool: string;
  /** Absolute path of the manifest and the sha256 of its bytes. */
  readonly manifest: readonly [string, string];
  /** Every other file loading and planning read (data files, local images, upstream results), absolute, with its sha256 or ABSENT; sorted by path. */
  readonly inputs: readonly (readonly [string, string])[];
  /** The run's choices that change what it plans or says (outputs folder, service, time scale). */
  readonly options: Readonly<Record<string, string>>;
  /** sha256 of the lockfile's text after its header line (every task line, as written). */
  readonly lines: string;
  /** The UTC day (Unix ms / 86,400,000) the reports' currency was checked on (their source digest moves with it). */
  readonly day: number;
  /** The reports' source digest (`.reports-source`) the run left. */
  readonly reports: string;
  readonly replay: SettledReplay;
  /** sha256 over all of the above: a stamp edited by hand does not match itself. */
  readonly key: string;
}

export type StampBody = Omit<SettledStamp, "key">;

export const toolOf = (packageVersion: string): string => `${packageVersion}+plan${SETTLED_PLAN_VERSION}`;

export const stampKey = (body: StampBody): string =>
  createHash("sha256")
    .update(
      stableJsonLine({
        format: body.format,
        tool: body.tool,
        manifest: body.manifest,
        inputs: body.inputs,
        options: body.options,
        lines: body.lines,
        day: body.day,
        reports: body.reports,
        replay: body.replay,
      }),
    )
    .digest("hex");

export const makeStamp = (body: StampBody): SettledStamp => ({ ...body, key: stampKey(body) });

const isHex64 = (v: unknown): v is string => typeof v === "string" && /^[0-9a-f]{64}$/.test(v);
const isPair = (v: unknown): v is [string, string] => Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string";
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The header's `settled` as a stamp when it has the stamp's shape and its key matches its content; otherwise undefined (never trusted). */
export const readStamp = (value: unknown): SettledStamp | undefined => {
  if (!isRecord(value)) return undefined;
  const v = value;
  if (v["format"] !== SETTLED_STAMP_FORMAT || typeof v["tool"] !== "string" || !isPair(v["manifest"])) return undefined;
  if (!Array.isArray(v["inputs"]) || !v["inputs"].every(isPair)) return undefined;
  if (!isRecord(v["options"]) || !Object.values(v["options"]).every((o) => typeof o === "string")) return undefined;
  if (!isHex64(v["lines"]) || !isHex64(v["reports"]) || !isHex64(v["key"])) return undefined;
  if (typeof v["day"] !== "number" || !Number.isInteger(v["day"])) return undefined;
  const replay = v["replay"];
  if (!isRecord(replay) || !Array.isArray(replay["events"]) || !replay["events"].every(isRecord) || !isRecord(replay["summary"])) return undefined;
  // Only a run that ended done, exit 0, with nothing made is ever stamped (endsSettled): a
  // replay saying otherwise is no stamp of ours, whatever its key.
  const told = replay["summary"];
  if (told["outcome"] !== "done" || told["exitCode"] !== 0 || told["created"] !== 0 || told["downloaded"] !== 0) return undefined;
  if (!replay["events"].every((e) => e["type"] === "start")) return undefined;
  const stamp = value as unknown as SettledStamp;
  return stampKey(stamp) === stamp.key ? stamp : undefined;
};

/** What the run command was asked, as far as the fast path cares. */
export interface RunAsked {
  readonly emulate: boolean;
  /** --only, --where, --failed. */
  readonly selection: boolean;
  readonly plan: boolean;
  readonly recreateLost: boolean;
  readonly switchService: boolean;
  /** --no-callbacks, --callback-url, --callback-listen. */
  readonly callbackFlags: boolean;
  /** CI=true (the runner-only warning looks at the folder) or $GITHUB_STEP_SUMMARY set (appended each run). */
  readonly ci: boolean;
}

/** Why this run may not take the fast path, or undefined when it may (pure). */
export const fastPathRefusal = (asked: RunAsked): string | undefined => {
  if (asked.emulate) return "--emulate (a fresh service each run)";
  if (asked.selection) return "a selection (--only, --where, --failed)";
  if (asked.plan) return "a saved plan (--plan)";
  if (asked.recreateLost) return "--recreate-lost";
  if (asked.switchService) return "--switch-service";
  if (asked.callbackFlags) return "callback flags";
  if (asked.ci) return "CI (runner-only warning, step summary)";
  return undefined;
};

/** What this run observed before expanding anything: the same fields, freshly computed. */
export interface Observed {
  readonly tool: string;
  readonly manifest: readonly [string, string];
  /** sha256 (or ABSENT) of each path the stamp lists, read now. */
  readonly inputs: ReadonlyMap<string, string>;
  readonly options: Readonly<Record<string, string>>;
  readonly lines: string;
  readonly day: number;
  /** `.reports-source` as on disk now (trimmed), undefined when absent; and whether every report file exists. */
  readonly reports: string | undefined;
  readonly reportFilesPresent: boolean;
  /** The journal beside the lockfile exists (a run was killed, or is going). */
  readonly journal: boolean;
  /** The header's service. */
  readonly service: string | undefined;
}

const LINES_CHANGED = "the lockfile's task lines changed";

/** Why the stamp does not match what this run observed, or undefined when it matches in every part (pure). */
export const stampMismatch = (stamp: SettledStamp, now: Observed): string | undefined => {
  if (now.journal) return "a journal is present";
  if (stamp.tool !== now.tool) return `made by ${stamp.tool}, this is ${now.tool}`;
  if (stamp.manifest[0] !== now.manifest[0] || stamp.manifest[1] !== now.manifest[1]) return "the manifest changed";
  for (const [path, sha] of stamp.inputs) if (now.inputs.get(path) !== sha) return `the input ${path} changed`;
  const a = Object.keys(stamp.options).sort();
  const b = Object.keys(now.options).sort();
  if (a.length !== b.length || a.some((k, i) => k !== b[i] || stamp.options[k] !== now.options[k])) return "the run's options differ";
  if (now.service === undefined || stamp.options["service"] !== now.service) return "the lockfile's service differs";
  if (stamp.lines !== now.lines) return LINES_CHANGED;
  if (stamp.day !== now.day) return "another day (the reports' currency moves with it)";
  if (!now.reportFilesPresent || now.reports !== stamp.reports) return "the reports changed";
  return undefined;
};

/** The end of a full run, as far as stamping cares. */
export interface RunEnd {
  readonly outcome: string;
  readonly exitCode: number;
  readonly created: number;
  readonly adopted: number;
  readonly downloaded: number;
  readonly failures: number;
  /** The run put no record and replaced none. */
  readonly unchanged: boolean;
  /** Every record downloaded, none with a result deleted at the service, none with a failure group. */
  readonly allDownloaded: boolean;
  readonly reviewWaiting: boolean;
  readonly lost: boolean;
  readonly reportsWritten: boolean;
  /** Event types the run emitted besides its start and summary. */
  readonly otherEvents: number;
}

/** Whether a full run's end may be stamped as settled (pure): nothing to do, nothing left to do. */
export const endsSettled = (end: RunEnd): boolean =>
  end.outcome === "done" &&
  end.exitCode === 0 &&
  end.created === 0 &&
  end.adopted === 0 &&
  end.downloaded === 0 &&
  end.failures === 0 &&
  end.unchanged &&
  end.allDownloaded &&
  !end.reviewWaiting &&
  !end.lost &&
  end.reportsWritten &&
  end.otherEvents === 0;

/** A result path from a task line is used only when it is a plain relative path inside the outputs folder. */
export const safeRelPath = (rel: string): boolean => rel.length > 0 && !UNSAFE_PATH.test(rel);

/** An empty, `.` or `..` part, a leading `/`, a backslash or a NUL. */
const UNSAFE_PATH = /(^|\/)\.{0,2}(\/|$)|\\|\0/;
