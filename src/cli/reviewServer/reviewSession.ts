// One review session's state on disk, shared by `omnibatch review`'s flags and its page:
// the manifest's reviewed jobs, the lockfile's outputs of them and the review file. Each
// decision is read-modify-written at once (atomic rename), so a run starting meanwhile
// reads the old decisions or the new ones, never a mix; one at a time, in this process (a
// queue: the page's decisions arrive together) and across processes (the review file's
// lock, src/review/reviewFileLock.ts), so no decision made meanwhile is written over.

import { LockfileMissing } from "../../state/LockfileError.js";
import { readLockFile } from "../../state/readLockFile.js";
import type { LoadedManifest } from "../../manifest/LoadedManifest.js";
import { emulatedManifest } from "../../run/EmulatedRun.js";
import { readReviewFile } from "../../review/readReviewFile.js";
import { type Decision, type ReviewEntry, reviewFileFor } from "../../review/ReviewFile.js";
import { indexDecisions, withDecisions } from "../../review/reviewDecision.js";
import { type ReviewFilter, type ReviewItem, matchesFilter, reviewItems } from "../../review/reviewItems.js";
import { withReviewFileLock } from "../../review/reviewFileLock.js";
import { writeReviewFile } from "../../review/writeReviewFile.js";

export interface ReviewSession {
  readonly manifest: LoadedManifest;
  readonly emulated: boolean;
  readonly reviewFile: string;
  readonly outputsDir: string;
  readonly lockfilePath: string;
  readonly jobs: ReadonlySet<string>;
  /** The outputs as the files say now. */
  readonly items: () => Promise<ReviewItem[]>;
  /** Decides the outputs given (as they are now); returns how many entries changed. */
  readonly decide: (targets: readonly Pick<ReviewItem, "task" | "output">[], decision: Decision) => Promise<number>;
}

/** A review session, or LockfileMissing when nothing has run yet. */
export const openReviewSession = async (loaded: LoadedManifest, emulated: boolean, now: () => Date = () => new Date()): Promise<ReviewSession> => {
  const m = emulated ? emulatedManifest(loaded) : loaded;
  const reviewFile = reviewFileFor(loaded.file, emulated);
  const jobs = new Set(loaded.jobs.filter((j) => j.review).map((j) => j.id));
  const items = async () => reviewItems(await readLockFile(m.lockfilePath), jobs, indexDecisions(readReviewFile(reviewFile)));
  if ((await readLockFile(m.lockfilePath)) === undefined) {
    throw new LockfileMissing({
      path: m.lockfilePath,
      message: `no lockfile at ${m.lockfilePath}: nothing has run${emulated ? " on the emulator" : ""} for this manifest yet, so there is nothing to review. Run 'omnibatch run ${loaded.file}${emulated ? " --emulate" : ""}' first.`,
    });
  }
  // The file as it is once the lock is held: read again there, never from before.
  const decideNow = async (targets: readonly Pick<ReviewItem, "task" | "output">[], decision: Decision): Promise<number> => {
    const current = await items();
    const byKey = new Map(current.map((i) => [`${i.task}#${i.output}`, i] as const));
    const at = now().toISOString();
    const made: ReviewEntry[] = [];
    for (const t of targets) {
      const i = byKey.get(`${t.task}#${t.output}`);
      if (!i || i.state === decision) continue;
      made.push({ task: i.task, output: i.output, sha256: i.sha256, decision, at, job: i.job, file: i.path });
    }
    if (made.length > 0) await writeReviewFile(reviewFile, withDecisions(readReviewFile(reviewFile), made));
    return made.length;
  };
  let queue: Promise<unknown> = Promise.resolve();
  const decide = (targets: readonly Pick<ReviewItem, "task" | "output">[], decision: Decision): Promise<number> => {
    const mine = queue.then(() => withReviewFileLock(reviewFile, () => decideNow(targets, decision)));
    queue = mine.catch(() => undefined);
    return mine;
  };
  return { manifest: loaded, emulated, reviewFile, outputsDir: m.outputsDir, lockfilePath: m.lockfilePath, jobs, items, decide };
};

export const selectItems = (items: readonly ReviewItem[], filter: ReviewFilter): ReviewItem[] => items.filter((i) => matchesFilter(i, filter));
