// The review decisions a manifest is planned with: its review file (or its emulated runs'
// one) when a job of it is marked `review`, none otherwise. Every command that plans a
// manifest against its lockfile (plan, run, status, report, prune) reads them here, so
// what each shows of a reviewed job's downstream tasks is what the run does.

import { readReviewFile } from "./readReviewFile.js";
import { reviewFileFor } from "./ReviewFile.js";
import { type DecisionIndex, indexDecisions } from "./reviewDecision.js";

/** What of a manifest says whether and where it has decisions. */
export interface ReviewedManifest {
  readonly file: string;
  readonly jobs: readonly { readonly review?: true }[];
}

/** The decisions, or undefined when no job is reviewed (no file read). ReviewFileInvalid when the file is. */
export const manifestDecisions = (manifest: ReviewedManifest, emulated: boolean): DecisionIndex | undefined =>
  manifest.jobs.some((j) => j.review) ? indexDecisions(readReviewFile(reviewFileFor(manifest.file, emulated))) : undefined;
