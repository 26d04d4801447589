// A throwaway git checkout with a bare "origin", as actions/checkout leaves one: the
// workspace the action's steps run in, and the remote its lockfile commit is pushed to.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";

export interface GitFixture {
  readonly root: string;
  /** The checkout (GITHUB_WORKSPACE). */
  readonly work: string;
  /** The bare remote, `origin`. */
  readonly remote: string;
  git(args: readonly string[], cwd?: string): Promise<string>;
  remove(): void;
}

const gitEnv = { GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_NAME: "Test User", GIT_AUTHOR_EMAIL: "user@example.com", GIT_COMMITTER_NAME: "Test User", GIT_COMMITTER_EMAIL: "user@example.com" };

/** A repository on branch main holding `files` (path -> content), pushed to a bare origin. */
export const gitFixture = async (files: Record<string, string>): Promise<GitFixture> => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-git-"));
  const remote = join(root, "origin.git");
  const work = join(root, "work");
  const git = async (args: readonly string[], cwd = work) => (await execa("git", [...args], { cwd, env: gitEnv })).stdout;
  await execa("git", ["init", "--bare", "-q", "-b", "main", remote], { env: gitEnv });
  await execa("git", ["clone", "-q", remote, work], { env: gitEnv });
  await git(["checkout", "-q", "-b", "main"]);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), text);
  }
  await git(["add", "-A"]);
  await git(["commit", "-q", "-m", "initial"]);
  await git(["push", "-q", "origin", "main"]);
  return { root, work, remote, git, remove: () => rmSync(root, { recursive: true, force: true }) };
};
