// The emulated service of `run --emulate` kept between runs: its tasks and clock are saved
// beside the emulated lockfile (`M.emulate.state.json`) at the end of each run and taken
// up by the next, so a run after a review can still make clips from the stills an earlier
// run made, and results are deleted 30 days after generation by the emulated clock.
//
// Whether a saved state may be taken up is a pure decision (emulatorStart) over what was
// read and the emulated lockfile's records; reading and writing are the shell around it.
// The file is untrusted input: a damaged one is named in a warning and a new emulated
// service starts, never a crash.

import type { RunningEmulator } from "../emulator/Emulator.js";
import type { RunEvent } from "../engine/RunEvent.js";
import type { LockTask } from "../state/LockFile.js";
import { emulatorStatePath } from "./EmulatedRun.js";
import { decodeEmulatorState, encodeEmulatorState, epochOfTaskId, type EmulatorState } from "../emulator/EmulatorState.js";
import { readRegularFileSync } from "../manifest/readRegularFile.js";
import { writeFileAtomic } from "../state/writeFileAtomic.js";

/** A state file larger than this is not read (about a million tasks). */
const MAX_STATE_BYTES = 1024 * 1024 * 1024;

export type StateRead =
  | { readonly kind: "absent" }
  | { readonly kind: "damaged"; readonly problem: string }
  | { readonly kind: "read"; readonly state: EmulatorState };

export type EmulatorStart =
  /** Take up the saved service: it holds every task the lockfile has at the service. */
  | { readonly kind: "kept"; readonly state: EmulatorState }
  /**
   * A new emulated service, which knows none of the lockfile's tasks (the run makes those
   * in flight again). Its ids use `epoch`, which no task id of the lockfile has, so no
   * recorded id can name one of its tasks.
   */
  | { readonly kind: "fresh"; readonly epoch: number; readonly warning?: string };

/** States at which the lockfile says the task exists at the service and is not finished with locally. */
const atService = new Set<LockTask["state"]>(["submitted", "processing", "succeeded"]);

const freshEpoch = (records: ReadonlyMap<string, LockTask>, after: number): number => {
  const used = new Set<number>();
  for (const rec of records.values()) {
    const epoch = rec.task_id === undefined ? undefined : epochOfTaskId(rec.task_id);
    if (epoch !== undefined) used.add(epoch);
  }
  for (let i = 1; i <= 1000; i++) {
    const epoch = (after + i) % 1000;
    if (!used.has(epoch)) return epoch;
  }
  return (after + 1) % 1000;
};

/**
 * What the emulated service of a run starts from. A state is taken up only beside a
 * lockfile with records, and only when it holds every task the lockfile records at the
 * service and unfinished there (else it is older than the lockfile: a run killed before
 * it saved); otherwise a new service starts, with a warning when a state was there and
 * could not be used.
 */
export const emulatorStart = (read: StateRead, records: ReadonlyMap<string, LockTask>, file: string): EmulatorStart => {
  const lastEpoch = read.kind === "read" ? read.state.store.epoch : -1;
  if (records.size === 0) return { kind: "fresh", epoch: freshEpoch(records, lastEpoch) };
  if (read.kind === "absent") return { kind: "fresh", epoch: freshEpoch(records, lastEpoch) };
  const afresh = "a new emulated service starts: tasks in flight are made again, and a downstream task of an earlier result is made once its upstream task is made again (delete the emulated lockfile and outputs to start over)";
  if (read.kind === "damaged") return { kind: "fresh", epoch: freshEpoch(records, lastEpoch), warning: `cannot use the emulated service's saved state ${file}: ${read.problem}; ${afresh}` };
  const known = new Set(read.state.store.tasks.map((t) => t.id));
  let missing = 0;
  for (const rec of records.values()) {
    if (rec.task_id !== undefined && rec.abandoned === undefined && atService.has(rec.state) && !known.has(rec.task_id)) missing++;
  }
  if (missing > 0) {
    return {
      kind: "fresh",
      epoch: freshEpoch(records, lastEpoch),
      warning: `the emulated service's saved state ${file} is older than the emulated lockfile (${missing} task(s) in flight there are not in it: was a run killed?); ${afresh}`,
    };
  }
  return { kind: "kept", state: read.state };
};

/** Reads a saved state: absent, damaged (why) or read. Never throws. */
export const readEmulatorState = (file: string): StateRead => {
  const read = readRegularFileSync(file, MAX_STATE_BYTES);
  if (!read.ok) return read.reason === "does not exist" ? { kind: "absent" } : { kind: "damaged", problem: `it ${read.reason}` };
  const decoded = decodeEmulatorState(read.bytes.toString("utf8"));
  return decoded.ok ? { kind: "read", state: decoded.state } : { kind: "damaged", problem: decoded.problem };
};

/** Writes the state atomically (temp file, fsync, rename), as the lockfile is written. */
export const saveEmulatorState = async (file: string, state: EmulatorState): Promise<void> => {
  await writeFileAtomic(file, encodeEmulatorState(state));
};

/**
 * Gives a run's emulator, once the run holds the emulated lockfile, the tasks it kept (or
 * a new id epoch); a warning when a kept state could not be used. True when it starts as a
 * new service (the engine then makes unfinished tasks again: RunnerOptions.freshService).
 */
export const takeUpEmulator = (
  emulator: RunningEmulator,
  lockfilePath: string,
  recorded: ReadonlyMap<string, LockTask>,
  onEvent: ((event: RunEvent) => void) | undefined,
): boolean => {
  const file = emulatorStatePath(lockfilePath);
  const start = emulatorStart(readEmulatorState(file), recorded, file);
  if (start.kind === "fresh" && start.warning) onEvent?.({ type: "notice", level: "warn", message: start.warning });
  const base = emulator.saveState();
  emulator.restoreState(start.kind === "kept" ? start.state : { clock: base.clock, store: { ...base.store, epoch: start.epoch } });
  return start.kind === "fresh";
};

/** Saves the run's emulator beside the emulated lockfile; a write that fails is a warning (the next run starts a new service). */
export const keepEmulatorState = async (emulator: RunningEmulator, lockfilePath: string, onEvent: ((event: RunEvent) => void) | undefined): Promise<void> => {
  const file = emulatorStatePath(lockfilePath);
  try {
    await saveEmulatorState(file, emulator.saveState());
  } catch (error) {
    onEvent?.({ type: "notice", level: "warn", message: `could not save the emulated service's state ${file}: ${(error as Error).message}; the next --emulate run starts a new one` });
  }
};
