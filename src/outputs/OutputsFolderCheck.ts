// Symbolic links inside the outputs folder (committed to a repository, or made by
// anything else) must not carry downloads or temp-file clean-up out of it. Two checks:
// checkOutputsFolder, run once before anything is paid for, finds every link that
// resolves outside the folder; realDirInside guards each write and delete at the moment
// it happens (a link may appear while a run is going). Links that stay inside are fine.

import { lstat, readdir, readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { Data, Effect } from "effect";
import { UnsafeOutputPath } from "./OutputPaths.js";

/** A link in the outputs folder that leads out of it. */
export interface EscapingLink {
  /** Where the link is, relative to the outputs folder (`/` separators). */
  readonly path: string;
  /** Where it leads (the resolved real path), or the link text when it cannot be resolved. */
  readonly target: string;
}

/** The outputs folder holds links out of it: nothing may be paid for until they are gone. */
export class OutputsFolderUnsafe extends Data.TaggedError("OutputsFolderUnsafe")<{
  readonly outputsDir: string;
  readonly links: readonly EscapingLink[];
  readonly message: string;
}> {}

const isInside = (root: string, path: string): boolean => {
  const back = relative(root, path);
  return back === "" || (!back.startsWith("..") && !isAbsolute(back) && !back.split(sep).includes(".."));
};

const toSlash = (path: string): string => path.split(sep).join("/");

/** The real path of `path`, or of its deepest existing ancestor joined with the rest. */
const realOfPossiblyMissing = async (path: string): Promise<string> => {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      return join(await realpath(at), ...rest.reverse());
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw e;
      const parent = dirname(at);
      if (parent === at) return path;
      rest.push(basename(at));
      at = parent;
    }
  }
};

/** The outputs folder's own real path (the folder itself may be a link: the user chose it). */
const realRoot = (outputsDir: string): Promise<string> => realOfPossiblyMissing(resolve(outputsDir));

/**
 * Every symbolic link under the outputs folder that resolves outside it (or cannot be
 * resolved: a dangling link would be created through). With `dirs` (folders relative to
 * the outputs folder, e.g. the task folders of a run), only the links on the way to
 * those folders and inside them are looked at; without, the whole tree (links are not
 * followed while walking). At most `limit` are returned.
 */
export const findEscapingLinks = async (outputsDir: string, dirs?: readonly string[], limit = 20): Promise<EscapingLink[]> => {
  const root = await realRoot(outputsDir);
  const lexicalRoot = resolve(outputsDir);
  const found = new Map<string, EscapingLink>();
  const judge = async (abs: string): Promise<void> => {
    let target: string;
    try {
      target = await realpath(abs);
    } catch {
      target = await readlink(abs).catch(() => "(unreadable link)");
      found.set(abs, { path: toSlash(relative(lexicalRoot, abs)), target });
      return;
    }
    if (!isInside(root, target)) found.set(abs, { path: toSlash(relative(lexicalRoot, abs)), target });
  };
  const walk = async (dir: string): Promise<void> => {
    if (found.size >= limit) return;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (found.size >= limit) return;
      const abs = join(dir, entry.name);
      if (entry.isSymbolicLink()) await judge(abs);
      else if (entry.isDirectory()) await walk(abs);
    }
  };
  if (dirs === undefined) {
    await walk(lexicalRoot);
  } else {
    const seen = new Set<string>();
    for (const rel of dirs) {
      const parts = rel.split("/").filter((p) => p !== "" && p !== ".");
      let at = lexicalRoot;
      for (const part of parts) {
        at = join(at, part);
        if (seen.has(at)) continue;
        seen.add(at);
        const info = await lstat(at).catch(() => undefined);
        if (info === undefined) break;
        if (info.isSymbolicLink()) {
          await judge(at);
          break;
        }
      }
      const info = await lstat(join(lexicalRoot, ...parts)).catch(() => undefined);
      if (info?.isDirectory()) await walk(join(lexicalRoot, ...parts));
      if (found.size >= limit) break;
    }
  }
  return [...found.values()].slice(0, limit);
};

/**
 * Fails with OutputsFolderUnsafe when a link in the outputs folder leads out of it.
 * Call it before the first create of a run (nothing paid for yet); `dirs` narrows the
 * look to the run's task folders (see findEscapingLinks).
 */
export const checkOutputsFolder = (outputsDir: string, dirs?: readonly string[]): Effect.Effect<void, OutputsFolderUnsafe> =>
  Effect.flatMap(
    Effect.promise(() => findEscapingLinks(outputsDir, dirs)),
    (links) =>
      links.length === 0
        ? Effect.void
        : Effect.fail(
            new OutputsFolderUnsafe({
              outputsDir,
              links,
              message:
                `the outputs folder ${outputsDir} holds ${links.length === 1 ? "a symbolic link" : "symbolic links"} leading out of it, ` +
                `so results would be written (and temp files deleted) elsewhere: ` +
                links.map((l) => `${l.path} -> ${l.target}`).join(", ") +
                `. Remove ${links.length === 1 ? "it" : "them"} or make ${links.length === 1 ? "it" : "them"} real folders; nothing was sent.`,
            }),
          ),
  );

/**
 * `dir` (absolute, inside the outputs folder by its name) after checking that its real
 * path is inside the outputs folder's real path too; throws UnsafeOutputPath otherwise.
 * Call it right before writing into or deleting from `dir`.
 */
export const realDirInside = async (outputsDir: string, dir: string): Promise<string> => {
  const root = await realRoot(outputsDir);
  const real = await realOfPossiblyMissing(dir);
  if (!isInside(root, real)) {
    throw new UnsafeOutputPath(
      `refusing to write outside the outputs folder: ${toSlash(relative(resolve(outputsDir), dir))} leads to ${real} through a symbolic link; remove the link`,
    );
  }
  return dir;
};
