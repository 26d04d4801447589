// The one check that keeps every write inside the outputs folder whatever a manifest or the
// service says, and the lockfile's form of a file's place. Pure path arithmetic. The files'
// names are manifest/fileNames.ts (the plan shows them too).

import { isAbsolute, posix, relative, resolve, sep } from "node:path";
import { isPlainRelativePath, outsideProblem, UnsafeOutputPath } from "../fs/insidePath.js";

export { UnsafeOutputPath } from "../fs/insidePath.js";

let lastRoot: { readonly dir: string; readonly root: string } | undefined;
const rootOf = (outputsDir: string): string => {
  if (lastRoot?.dir !== outputsDir) lastRoot = { dir: outputsDir, root: resolve(outputsDir) };
  return lastRoot.root;
};

/**
 * The absolute path of `rel` (a `/`-separated path relative to the outputs folder),
 * refusing anything that would resolve outside it (`..`, absolute paths, drive letters):
 * the rule is fs/insidePath.ts `outsideProblem`, the one the lockfile reader and the
 * store's keys use too.
 */
export const resolveInside = (outputsDir: string, rel: string): string => {
  const root = rootOf(outputsDir);
  // The usual case, checked cheaply (a rerun checks 100,000 of them): plain names joined
  // by `/`, none empty, `.` or `..`, none holding a separator, a drive colon or a NUL.
  // Names like that cannot leave the folder, and need no normalising: joined as text
  // (path.join cost a fifth of a rerun's check of each recorded file).
  if (isPlainRelativePath(rel)) {
    const tail = sep === "/" ? rel : rel.split("/").join(sep);
    return root.endsWith(sep) ? `${root}${tail}` : `${root}${sep}${tail}`;
  }
  if (outsideProblem(rel) !== undefined) {
    throw new UnsafeOutputPath(`refusing to write outside the outputs folder: ${JSON.stringify(rel)}`);
  }
  const target = resolve(root, ...rel.split("/"));
  const back = relative(root, target);
  if (back === "" || back.startsWith("..") || isAbsolute(back) || back.split(sep).includes("..")) {
    throw new UnsafeOutputPath(`refusing to write outside the outputs folder: ${JSON.stringify(rel)}`);
  }
  return target;
};

/** The lockfile's form of a file's place: relative to the outputs folder, `/` separators. */
export const relativePath = (dir: string, name: string): string => posix.join(dir.split(sep).join("/"), name);
