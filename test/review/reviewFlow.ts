// Shared by the review tests: the demo manifest with `review: true` on its image job,
// copied to a temp folder; a standalone emulator (the built CLI's `omnibatch emulator`)
// that keeps its tasks between runs as the real service does, so a run after a review
// can make clips from the stills an earlier run made; and the built CLI.

import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa, type ResultPromise } from "execa";
import { demoCopy } from "../checkoutFiles.js";

export const root = fileURLToPath(new URL("../..", import.meta.url));
export const bin = join(root, "dist", "cli", "bin.js");

/** A temp copy of the demo (test/checkoutFiles.ts) whose demo.yaml reviews its keyframes; returns the folder. */
export const reviewedDemo = (extra = ""): string => {
  const dir = demoCopy("omnibatch-review-");
  const path = join(dir, "manifests", "demo.yaml");
  const text = readFileSync(path, "utf8");
  const marked = text.replace(/(\n  keyframes:\n    kind: image\n)/, `$1    review: ${extra || "true"}\n`);
  if (marked === text) throw new Error("the demo manifest changed shape: cannot add review");
  writeFileSync(path, marked);
  return dir;
};

export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true });

export const cli = (cwd: string, args: string[], env: Record<string, string> = {}) =>
  execa("node", [bin, ...args], { cwd, reject: false, all: true, timeout: 120_000, env: { ...env, GITHUB_STEP_SUMMARY: "" } });

export interface EmulatorProcess {
  readonly env: Record<string, string>;
  readonly stop: () => Promise<void>;
}

/** `omnibatch emulator --port 0`, quick; its address and key as the env a run reads. */
export const startEmulatorProcess = async (): Promise<EmulatorProcess> => {
  const child: ResultPromise = execa("node", [bin, "emulator", "--port", "0", "--time-scale", "0.05"], { reject: false, buffer: false });
  const env = await new Promise<Record<string, string>>((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`the emulator did not start: ${text}`)), 30_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const url = /export OMNIBATCH_BASE_URL=(\S+)/.exec(text)?.[1];
      const key = /export OMNIBATCH_API_KEY=(\S+)/.exec(text)?.[1];
      if (url && key) {
        clearTimeout(timer);
        resolve({ OMNIBATCH_BASE_URL: url, OMNIBATCH_API_KEY: key });
      }
    });
  });
  return {
    env,
    stop: async () => {
      child.kill("SIGTERM");
      await child;
    },
  };
};

export interface ReviewPage {
  /** The printed address, with its token. */
  readonly url: string;
  /** What the server printed so far. */
  readonly output: () => string;
  /** Ctrl-C; resolves with the exit code and what it printed. */
  readonly stop: () => Promise<{ exitCode: number | undefined; stdout: string; stderr: string }>;
  readonly kill: () => void;
}

/** `omnibatch review <args>` (the built CLI) serving its page; resolves once it prints its address. */
export const startReviewPage = async (cwd: string, args: string[], env: Record<string, string> = {}): Promise<ReviewPage> => {
  const child = execa("node", [bin, "review", ...args], { cwd, reject: false, buffer: true, timeout: 300_000, env: { ...env, GITHUB_STEP_SUMMARY: "" } });
  let text = "";
  let errText = "";
  child.stdout!.on("data", (c: Buffer) => void (text += c.toString("utf8")));
  child.stderr!.on("data", (c: Buffer) => void (errText += c.toString("utf8")));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address printed: ${text}${errText}`)), 60_000);
    const look = () => {
      const m = /(http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on("data", look);
    void child.then((r) => {
      clearTimeout(timer);
      reject(new Error(`review exited ${r.exitCode} before serving: ${text}${errText}`));
    });
  });
  return {
    url,
    output: () => text,
    stop: async () => {
      child.kill("SIGINT");
      const r = await child;
      return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
    },
    kill: () => void child.kill("SIGKILL"),
  };
};
