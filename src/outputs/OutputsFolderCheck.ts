// Symbolic links inside the outputs folder (committed to a repository, or made by
// anything else) must not carry downloads or temp-file clean-up out of it. Two checks:
// checkOutputsFolder, run once before anything is paid for, finds every link that
// resolves outside the folder; realDirInside guards each write and delete at the moment
// it happens (a link may appear while a run is going). Links that stay inside are fine.

import { type Dirent, lstatSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
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


/** The outputs folder's own real path (the folder itself may be a link: the user chose it). */
const realRoot = async (outputsDir: string): Promise<string> => realOfPossiblyMissingSync(resolve(outputsDir));

/**
 * Which folders (relative to the outputs folder, `/` separators) a check looks at:
 * `inside`, on the way to each and everything within (the folders a run may create and
 * download into); `onTheWay`, only on the way to each, the folder's own entry included
 * (folders of finished tasks, where a run writes at most a sidecar file by rename).
 */
export interface LinkScope {
  readonly inside: readonly string[];
  readonly onTheWay?: readonly string[];
}

/** A folder of the scope, as a tree of path parts. */
export interface ScopeNode {
  /** Made for the first child: the 100,000 task folders of a large run are leaves, with none. */
  children: Map<string, ScopeNode> | undefined;
  inside: boolean;
}

const NO_CHILDREN: ReadonlyMap<string, ScopeNode> = new Map();

/**
 * The one node of every folder that is only on the way (a finished task's): no children,
 * not inside. Shared (100,000 leaves made no node each); a path added through it later
 * replaces it with a node of its own.
 */
const ON_THE_WAY_LEAF: ScopeNode = Object.freeze({ children: undefined, inside: false }) as ScopeNode;

/**
 * The scope as a tree of path parts (empty parts and `.` skipped). A run's task folders
 * come in long runs under the same job folder: the parent of the last path added is
 * kept, so each such folder costs a lookup of its last part only (no split, no walk).
 */
export const scopeTree = (scope: LinkScope): ScopeNode => {
  const root: ScopeNode = { children: undefined, inside: false };
  const child = (node: ScopeNode, part: string, leaf: boolean): ScopeNode => {
    const children = (node.children ??= new Map());
    let next = children.get(part);
    if (next === undefined || (next === ON_THE_WAY_LEAF && !leaf)) {
      next = leaf ? ON_THE_WAY_LEAF : { children: undefined, inside: false };
      children.set(part, next);
    }
    return next;
  };
  // A folder's node, made (never the shared leaf) with those on the way to it.
  const folder = (rel: string): ScopeNode => {
    let node = root;
    for (const part of rel.split("/")) if (part !== "" && part !== ".") node = child(node, part, false);
    return node;
  };
  let lastParent: string | undefined;
  let lastParentNode = root;
  const add = (rel: string, inside: boolean) => {
    const cut = rel.lastIndexOf("/");
    const parentRel = cut < 0 ? "" : rel.slice(0, cut);
    if (parentRel !== lastParent) {
      lastParentNode = folder(parentRel);
      lastParent = parentRel;
    }
    const last = cut < 0 ? rel : rel.slice(cut + 1);
    const node = last === "" || last === "." ? lastParentNode : child(lastParentNode, last, !inside);
    if (inside) node.inside = true;
  };
  for (const rel of scope.inside) add(rel, true);
  for (const rel of scope.onTheWay ?? []) add(rel, false);
  return root;
};

/** Up to this many wanted entries of one folder are looked up one by one; more, and the folder is listed once. */
const LOOKUPS_BEFORE_LISTING = 16;

type EntryKind = "link" | "dir" | "other";

const kindOf = (entry: { isSymbolicLink(): boolean; isDirectory(): boolean }): EntryKind =>
  entry.isSymbolicLink() ? "link" : entry.isDirectory() ? "dir" : "other";

/** Whether a check must look at the scope's folder `child`, an entry of this `kind`: a link is judged, a folder with some of the scope below it entered. */
const mattersHere = (kind: EntryKind | undefined, child: ScopeNode): boolean =>
  kind === "link" || (kind === "dir" && (child.inside || child.children !== undefined));

/**
 * The kinds of the named entries of `dir` (the keys of `children`) that exist (links not
 * followed), or, from a listing (more than LOOKUPS_BEFORE_LISTING of them), only of those
 * that matter (mattersHere): 100,000 finished tasks' folders in one job folder are looked
 * up in the scope, not put into a map of their own.
 */
const entryKinds = (dir: string, children: ReadonlyMap<string, ScopeNode>): Map<string, EntryKind> => {
  const kinds = new Map<string, EntryKind>();
  if (children.size > LOOKUPS_BEFORE_LISTING) {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return kinds;
    }
    for (const entry of entries) {
      const kind = kindOf(entry);
      if (kind === "other") continue;
      const child = children.get(entry.name);
      if (child !== undefined && mattersHere(kind, child)) kinds.set(entry.name, kind);
    }
    return kinds;
  }
  for (const name of children.keys()) {
    let info;
    try {
      info = lstatSync(join(dir, name), { throwIfNoEntry: false });
    } catch (e) {
      // A file where a folder on the way should be: nothing here; the write probe that
      // follows (run/startChecks.ts) reports the folder as one that cannot be written.
      if ((e as NodeJS.ErrnoException).code === "ENOTDIR") continue;
      throw e;
    }
    if (info !== undefined) kinds.set(name, kindOf(info));
  }
  return kinds;
};

/**
 * Every symbolic link under the outputs folder that resolves outside it (or cannot be
 * resolved: a dangling link would be created through). With `dirs` (folders relative to
 * the outputs folder, e.g. the task folders of a run: an array is `{ inside: dirs }`),
 * only the links on the way to those folders and, for `inside` ones, within them are
 * looked at; without, the whole tree (links are not followed while walking). At most
 * `limit` are returned. Synchronous file-system calls: a rerun over 100,000 finished
 * tasks looks at their folders through one listing of their parent, not 100,000 awaits.
 */
export const findEscapingLinks = async (outputsDir: string, dirs?: readonly string[] | LinkScope, limit = 20): Promise<EscapingLink[]> => {
  const root = await realRoot(outputsDir);
  const lexicalRoot = resolve(outputsDir);
  const found = new Map<string, EscapingLink>();
  const judge = (abs: string): void => {
    let target: string;
    try {
      target = realpathSync(abs);
    } catch {
      try {
        target = readlinkSync(abs);
      } catch {
        target = "(unreadable link)";
      }
      found.set(abs, { path: toSlash(relative(lexicalRoot, abs)), target });
      return;
    }
    if (!isInside(root, target)) found.set(abs, { path: toSlash(relative(lexicalRoot, abs)), target });
  };
  const walk = (dir: string): void => {
    if (found.size >= limit) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (found.size >= limit) return;
      const abs = join(dir, entry.name);
      if (entry.isSymbolicLink()) judge(abs);
      else if (entry.isDirectory()) walk(abs);
    }
  };
  // `node` is a folder of the scope whose path so far holds no link (the root may be one: the user chose it).
  const visit = (node: ScopeNode, abs: string): void => {
    if (found.size >= limit) return;
    if (node.inside) return walk(abs);
    const children = node.children ?? NO_CHILDREN;
    if (children.size === 0) return;
    const kinds = entryKinds(abs, children);
    // Nothing to judge or enter (100,000 finished tasks' folders): no walk of the scope's folders.
    if (kinds.size === 0) return;
    for (const [name, child] of children) {
      if (found.size >= limit) return;
      const kind = kinds.get(name);
      // Missing: the run makes it as a real folder. Not a folder: making one there fails later.
      // A folder with nothing of the scope below it (a finished task's) is not entered: no path made for it.
      if (kind === undefined || !mattersHere(kind, child)) continue;
      if (kind === "link") judge(join(abs, name));
      else visit(child, join(abs, name));
    }
  };
  if (dirs === undefined) walk(lexicalRoot);
  else visit(scopeTree(Array.isArray(dirs) ? { inside: dirs as readonly string[] } : (dirs as LinkScope)), lexicalRoot);
  return [...found.values()].slice(0, limit);
};

/**
 * Fails with OutputsFolderUnsafe when a link in the outputs folder leads out of it.
 * Call it before the first create of a run (nothing paid for yet); `dirs` narrows the
 * look to the run's task folders (see findEscapingLinks).
 */
export const checkOutputsFolder = (outputsDir: string, dirs?: readonly string[] | LinkScope): Effect.Effect<void, OutputsFolderUnsafe> =>
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
  const real = realOfPossiblyMissingSync(dir);
  if (!isInside(root, real)) throw escaping(outputsDir, dir, real);
  return dir;
};

const escaping = (outputsDir: string, dir: string, real: string): UnsafeOutputPath =>
  new UnsafeOutputPath(
    `refusing to write outside the outputs folder: ${toSlash(relative(resolve(outputsDir), dir))} leads to ${real} through a symbolic link; remove the link`,
  );

/** realDirInside for one outputs folder, as a downloader calls it several times per task. */
export interface FolderGuard {
  /** `dir` when its real path is inside the outputs folder's; throws UnsafeOutputPath otherwise. */
  readonly realDirInside: (dir: string) => string;
}

/**
 * The same check as realDirInside, made cheap for a run that writes thousands of task
 * folders: the outputs folder's real path is resolved once (once the folder exists: the
 * user chose it, links and all), and each folder below it is checked by an lstat of each
 * of its parts under the outputs folder (two for `job/task`), synchronously, instead of
 * two awaited realpath calls of the whole path. A part that is a symbolic link is
 * resolved in full (inside is fine, out is refused); a missing part ends the walk (what
 * is made there is a real folder). The check still happens at every call: a link made
 * while a run goes is seen at the next write.
 */
export const folderGuard = (outputsDir: string): FolderGuard => {
  const lexicalRoot = resolve(outputsDir);
  let root: string | undefined;
  const rootReal = (): string => {
    if (root !== undefined) return root;
    try {
      return (root = realpathSync(lexicalRoot));
    } catch {
      // Not made yet: what it will be (its deepest existing ancestor's real path), asked again next time.
      return realOfPossiblyMissingSync(lexicalRoot);
    }
  };
  return {
    realDirInside: (dir: string): string => {
      const base = rootReal();
      const rel = relative(lexicalRoot, dir);
      if (rel === "") return dir;
      if (rel.startsWith("..") || isAbsolute(rel)) throw escaping(outputsDir, dir, dir);
      let at = lexicalRoot;
      for (const part of rel.split(sep)) {
        if (part === "" || part === ".") continue;
        if (part === "..") throw escaping(outputsDir, dir, dir);
        at = join(at, part);
        let info;
        try {
          info = lstatSync(at, { throwIfNoEntry: false });
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "ENOTDIR") return dir; // a file on the way: making the folder fails
          throw e;
        }
        if (info === undefined) return dir; // missing from here down: made as real folders
        if (info.isSymbolicLink()) {
          const real = realOfPossiblyMissingSync(dir);
          if (!isInside(base, real)) throw escaping(outputsDir, dir, real);
          return dir;
        }
      }
      return dir;
    },
  };
};

/** The real path of `path`, or of its deepest existing ancestor joined with the rest (one native call per missing level). */
const realOfPossiblyMissingSync = (path: string): string => {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      return join(realpathSync(at), ...rest.reverse());
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
