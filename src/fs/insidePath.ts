// The one rule for a relative path read from somewhere untrusted (a lockfile's `dir` and
// output paths, a result's file name): it must stay inside the folder (or object-store
// prefix) it is relative to. Pure and lexical: the outputs folder's writer, prune, pull,
// the lockfile reader and the store's keys all ask this; symbolic links are the folder
// checks' business (outputs/OutputsFolderCheck.ts).

/** Thrown (as a value) when a path would leave the outputs folder or store prefix. */
export class UnsafeOutputPath extends Error {
  readonly _tag = "UnsafeOutputPath";
}

/** Plain names (no separator, drive colon or NUL) joined by single `/`s; `.` and `..` are told by dotSegment. */
const plainPath = /^[^/\\:\0]+(?:\/[^/\\:\0]+)*$/;
const dotSegment = /(?:^|\/)\.\.?(?:\/|$)/;

/** True for plain names joined by single `/`s, none `.` or `..` (the paths omnibatch itself writes): cheap. */
export const isPlainRelativePath = (rel: string): boolean => plainPath.test(rel) && !dotSegment.test(rel);

/**
 * Why `rel` (relative, `/`-separated) would not name something inside the folder it is
 * relative to, or undefined when it does: a NUL, an absolute path, a drive letter, or
 * `..` parts that climb above the start, or nothing left (the folder itself). A
 * backslash counts as a separator too (it is one on Windows and to some stores).
 */
export const outsideProblem = (rel: string): string | undefined => {
  if (isPlainRelativePath(rel)) return undefined;
  if (rel.includes("\0")) return "holds a NUL character";
  if (/^[\\/]/.test(rel) || /^[A-Za-z]:/.test(rel)) return "is an absolute path";
  let depth = 0;
  for (const part of rel.split(/[\\/]/)) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (--depth < 0) return "climbs out with '..'";
    } else depth++;
  }
  return depth === 0 ? "names no file or folder inside" : undefined;
};

/** `rel` when it stays inside; throws UnsafeOutputPath naming it and `where` otherwise. */
export const insideOrThrow = (rel: string, where = "the outputs folder"): string => {
  const problem = outsideProblem(rel);
  if (problem !== undefined) throw new UnsafeOutputPath(`refusing a path outside ${where}: ${JSON.stringify(rel)} ${problem}`);
  return rel;
};
