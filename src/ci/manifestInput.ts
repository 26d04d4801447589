// The Action's `manifest` input: one manifest, several (one per line, or separated by
// spaces) or glob patterns (`manifests/*.yaml`), expanded inside the repository. A line
// that names an existing file is one manifest whatever it holds (a path with spaces, as
// `init` may write); a pattern that matches nothing, or that reaches outside the
// repository, is the user's mistake (exit 2, naming it). The splitting and the matching
// rules are pure; expandManifestInput is the small shell that reads the folders.

import { readdirSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";

export class ManifestInputError extends Error {}

/** Whether an entry is a glob pattern (has `*`, `?` or `[`). */
export const isPattern = (entry: string): boolean => /[*?[]/.test(entry);

/**
 * The entries of the input: each non-empty line, kept whole when it names an existing
 * file (`isFile`), else split on whitespace.
 */
export const splitManifestInput = (text: string, isFile: (entry: string) => boolean): readonly string[] =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .flatMap((line) => (isFile(line) ? [line] : line.split(/\s+/)));

/** One path segment of a pattern as a RegExp: `*` any run of characters but `/`, `?` one, `[abc]`/`[!abc]` a class. */
export const segmentRegExp = (segment: string): RegExp => {
  let out = "";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[" && segment.indexOf("]", i + 2) > i) {
      const end = segment.indexOf("]", i + 2);
      let body = segment.slice(i + 1, end);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      out += `[${negate ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`;
      i = end;
    } else out += c.replace(/[.+^${}()|\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
};

/** Whether `path` (absolute) is `root` or inside it. */
export const inside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
};

/**
 * The literal folder a pattern starts from (its segments before the first with a glob
 * character), resolved against `cwd`, and the segments left to match. Refused when the
 * folder, or any `..` among the segments, would leave `root`.
 */
export const patternStart = (pattern: string, cwd: string, root: string): { readonly base: string; readonly rest: readonly string[] } => {
  const segments = pattern.split(/[\\/]+/);
  const first = segments.findIndex(isPattern);
  const literal = segments.slice(0, first);
  const rest = segments.slice(first);
  const base = resolve(cwd, literal.join("/") || (isAbsolute(pattern) ? "/" : "."));
  if (!inside(root, base) || rest.includes("..")) {
    throw new ManifestInputError(`input manifest: the pattern '${pattern}' reaches outside the repository (${root}): name manifests inside it`);
  }
  return { base, rest };
};

/** Folders a `**` does not descend into. */
const skipped = (name: string): boolean => name.startsWith(".") || name === "node_modules";

/** The review file written beside a manifest (M.review.yaml) is never a manifest. */
const notAManifest = (name: string): boolean => /\.review\.ya?ml$/i.test(name);

const MAX_ENTRIES = 20_000;

/** Regular files under `base` matching `rest` (a `**` segment: any number of folders), as absolute paths, sorted. */
const matchFiles = (base: string, rest: readonly string[], pattern: string): string[] => {
  const found = new Set<string>();
  let seen = 0;
  const walk = (dir: string, i: number): void => {
    const seg = rest[i];
    if (seg === undefined) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    seen += entries.length;
    if (seen > MAX_ENTRIES) throw new ManifestInputError(`input manifest: the pattern '${pattern}' looks through more than ${MAX_ENTRIES} files: make it narrower`);
    if (seg === "**") {
      walk(dir, i + 1);
      for (const e of entries) if (e.isDirectory() && !skipped(e.name)) walk(join(dir, e.name), i);
      return;
    }
    const re = segmentRegExp(seg);
    const last = i === rest.length - 1;
    for (const e of entries) {
      // A hidden entry only when the pattern names the dot itself; symbolic links never (they could lead outside).
      if (e.name.startsWith(".") && !seg.startsWith(".")) continue;
      if (!re.test(e.name)) continue;
      if (last && e.isFile() && !notAManifest(e.name)) found.add(join(dir, e.name));
      else if (!last && e.isDirectory()) walk(join(dir, e.name), i + 1);
    }
  };
  walk(base, 0);
  return [...found].sort();
};

/**
 * The manifests the input names, in its order (each pattern's matches sorted), each once,
 * relative to `cwd` when a pattern made them, else as written. `root`: the repository
 * (GITHUB_WORKSPACE), which no pattern may leave.
 */
export const expandManifestInput = (text: string, cwd: string, root: string): readonly string[] => {
  const isFile = (entry: string) => {
    try {
      return statSync(resolve(cwd, entry)).isFile();
    } catch {
      return false;
    }
  };
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (shown: string) => {
    const key = resolve(cwd, shown);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(shown);
  };
  for (const entry of splitManifestInput(text, isFile)) {
    if (!isPattern(entry) || isFile(entry)) {
      add(entry);
      continue;
    }
    const { base, rest } = patternStart(entry, cwd, root);
    // The literal folder itself may be a link: followed only when it stays inside the repository.
    const real = (p: string) => {
      try {
        return realpathSync(p);
      } catch {
        return undefined;
      }
    };
    const realBase = real(base);
    const matches = realBase !== undefined && inside(real(root) ?? root, realBase) ? matchFiles(base, rest, entry) : [];
    if (matches.length === 0) throw new ManifestInputError(`input manifest: the pattern '${entry}' matches no file in the repository: check the folder and the extension`);
    for (const m of matches) add(relative(cwd, m).split(sep).join("/"));
  }
  return out;
};
