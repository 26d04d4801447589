// The paths a lockfile record names (its task's folder, each output's file) must stay
// inside the outputs folder or store prefix: a hand edit or a pull request to the
// committed file (`"dir": "../../../escape"`) must not make a run write, a store upload,
// `pull` or `prune` reach outside. Checked when a lockfile is read (the line is named,
// exit 2), and again wherever a path or key is made from it. The rule is fs/insidePath.ts.

import { outsideProblem } from "../fs/insidePath.js";
import type { LockTask } from "./LockFile.js";

/** What is wrong with the paths `task` names (its `dir`, its outputs' paths), or undefined. */
export const recordPathProblem = (task: Pick<LockTask, "dir" | "outputs">): string | undefined => {
  const dirProblem = outsideProblem(task.dir);
  if (dirProblem !== undefined) return `its folder ("dir") ${JSON.stringify(task.dir)} ${dirProblem}: a task's folder must stay inside the outputs folder (or store prefix)`;
  for (let i = 0; i < task.outputs.length; i++) {
    const path = task.outputs[i]!.path;
    if (path === undefined) continue;
    const problem = outsideProblem(path);
    if (problem !== undefined) return `output ${i + 1}'s file ${JSON.stringify(path)} ${problem}: a result must stay inside the outputs folder (or store prefix)`;
  }
  return undefined;
};
