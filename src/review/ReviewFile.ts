// The review file's data and where it lives: decisions a person made on the outputs of
// jobs marked `review`, one entry per output keyed by the upstream task's external id,
// the output index and the file's sha256. Plain data; reading is readReviewFile.ts,
// writing writeReviewFile.ts, the rule that applies a decision reviewDecision.ts.

export type Decision = "approved" | "rejected";

export interface ReviewEntry {
  /** external_task_id of the task that made the output. */
  readonly task: string;
  /** The output's index in its task (0-based, as in the lockfile). */
  readonly output: number;
  /** The file the decision was made on. */
  readonly sha256: string;
  readonly decision: Decision;
  /** ISO 8601, UTC. */
  readonly at: string;
  /** For people reading the file; not part of the key. */
  readonly job?: string;
  readonly file?: string;
}

export interface ReviewFile {
  readonly version: 1;
  readonly outputs: readonly ReviewEntry[];
}

export const emptyReviewFile: ReviewFile = { version: 1, outputs: [] };

/** `demo.yaml` -> `demo.review.yaml`, beside the manifest (as `demo.lock.json` is). */
export const reviewFilePathFor = (manifest: string): string => manifest.replace(/\.ya?ml$/i, "") + ".review.yaml";

/**
 * `demo.review.yaml` -> `demo.emulate.review.yaml`: an emulated run's outputs are not the
 * paid ones, so their decisions are kept apart, as the emulated lockfile is
 * (src/run/EmulatedRun.ts names both).
 */
export const emulatedReviewFilePath = (reviewFile: string): string =>
  reviewFile.endsWith(".review.yaml") ? `${reviewFile.slice(0, -".review.yaml".length)}.emulate.review.yaml` : `${reviewFile}.emulate`;

/** The review file of a manifest, or of its emulated runs. */
export const reviewFileFor = (manifest: string, emulated: boolean): string =>
  emulated ? emulatedReviewFilePath(reviewFilePathFor(manifest)) : reviewFilePathFor(manifest);

/** The key of one output: a task's external id and output index. */
export const outputKey = (task: string, output: number): string => `${task}#${output}`;
