// Commits the lockfile (and the review file, when there is one) back to the branch the
// workflow runs on, as a clear bot identity with a message naming the run, so the next
// scheduled run resumes from it. Pushing retries a few times over a fresh rebase when
// someone else pushed meanwhile; git itself does the work (its credentials are the ones
// actions/checkout left behind).

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { basename, dirname, relative } from "node:path";

export const BOT_NAME = "github-actions[bot]";
export const BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com";

export interface CommitBackInput {
  /** Absolute paths; those that do not exist are skipped. */
  readonly files: readonly string[];
  readonly message: string;
  /** The branch to push to (without refs/heads/). */
  readonly branch: string;
  readonly remote?: string;
  readonly env: NodeJS.ProcessEnv;
  /** Push attempts (each after a rebase on the remote branch). */
  readonly attempts?: number;
}

export type CommitBackResult =
  | { readonly kind: "committed"; readonly sha: string; readonly files: readonly string[] }
  | { readonly kind: "unchanged" }
  | { readonly kind: "failed"; readonly reason: string };

const git = (cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolvePromise) => {
    execFile("git", [...args], { cwd, env: { ...env, GIT_TERMINAL_PROMPT: "0" }, timeout: 120_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === "number" ? (error as { code: number }).code : 1) : 0;
      resolvePromise({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });

const lastLine = (text: string): string => text.trim().split("\n").filter(Boolean).at(-1) ?? "";

export const commitBack = async (input: CommitBackInput): Promise<CommitBackResult> => {
  const files = input.files.filter((f) => existsSync(f));
  if (files.length === 0) return { kind: "unchanged" };
  const remote = input.remote ?? "origin";
  const top = await git(dirname(files[0]!), ["rev-parse", "--show-toplevel"], input.env);
  if (top.code !== 0) return { kind: "failed", reason: `${basename(files[0]!)} is not in a git repository` };
  const root = top.stdout.trim();
  const paths = files.map((f) => relative(root, f));
  const add = await git(root, ["add", "--", ...paths], input.env);
  if (add.code !== 0) return { kind: "failed", reason: `git add: ${lastLine(add.stderr)}` };
  const staged = await git(root, ["diff", "--cached", "--quiet", "--", ...paths], input.env);
  if (staged.code === 0) return { kind: "unchanged" };
  const identity = ["-c", `user.name=${BOT_NAME}`, "-c", `user.email=${BOT_EMAIL}`];
  // Only these files: anything else the user staged stays out of the bot's commit.
  const commit = await git(root, [...identity, "commit", "--no-verify", "-m", input.message, "--", ...paths], input.env);
  if (commit.code !== 0) return { kind: "failed", reason: `git commit: ${lastLine(commit.stderr || commit.stdout)}` };
  const attempts = input.attempts ?? 3;
  let reason = "";
  for (let i = 0; i < attempts; i++) {
    const push = await git(root, ["push", remote, `HEAD:refs/heads/${input.branch}`], input.env);
    if (push.code === 0) {
      const sha = (await git(root, ["rev-parse", "HEAD"], input.env)).stdout.trim();
      return { kind: "committed", sha, files: paths };
    }
    reason = lastLine(push.stderr);
    // Someone pushed meanwhile: replay the bot's commit on top and try again.
    const fetch = await git(root, ["fetch", remote, input.branch], input.env);
    if (fetch.code !== 0) return { kind: "failed", reason: `git fetch: ${lastLine(fetch.stderr)}` };
    const rebase = await git(root, [...identity, "rebase", "FETCH_HEAD"], input.env);
    if (rebase.code !== 0) {
      await git(root, ["rebase", "--abort"], input.env);
      return { kind: "failed", reason: `git rebase on ${remote}/${input.branch}: ${lastLine(rebase.stderr || rebase.stdout)}` };
    }
  }
  return { kind: "failed", reason: `git push to ${remote} ${input.branch} failed ${attempts} times: ${reason}` };
};
