// Every relative link in README.md and docs/*.md leads somewhere: the file exists, and an
// #anchor names a heading of that file by GitHub's slug rules (lower case, punctuation
// dropped, spaces to hyphens, a repeated heading numbered -1, -2). Links inside code are
// not links; headings inside fenced code blocks are not headings.

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pages = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** The text outside fenced code blocks, line by line (fenced lines blanked, so line numbers hold). */
const prose = (text: string): string[] => {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const m = /^\s*(```+|~~~+)/.exec(line);
    if (m) {
      if (fence === undefined) fence = m[1]![0]!;
      else if (m[1]![0] === fence) fence = undefined;
      return "";
    }
    return fence === undefined ? line : "";
  });
};

/** GitHub's heading anchor (github-slugger): lower case, drop what is not a letter, digit, mark, `_`, `-` or space; spaces to `-`. */
export const slug = (heading: string): string =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");

const anchorsOf = (file: string): Set<string> => {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(readFileSync(file, "utf8"))) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
};

/** Markdown links and images of a page outside code: [text](target) and ![alt](target). */
const linksOf = (file: string): { line: number; target: string }[] => {
  const out: { line: number; target: string }[] = [];
  prose(readFileSync(file, "utf8")).forEach((raw, i) => {
    const line = raw.replace(/`[^`]*`/g, "");
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: i + 1, target: m[1]! });
  });
  return out;
};

test("slug: GitHub's rules", () => {
  assert.is(slug("Review before you animate"), "review-before-you-animate");
  assert.is(slug("`results.jsonl` and task.json"), "resultsjsonl-and-taskjson");
  assert.is(slug("Throughput and resume, 2026-11-24 01:10 to 02:05 UTC"), "throughput-and-resume-2026-11-24-0110-to-0205-utc");
  assert.is(slug("What the service does: a **misbehaving** one"), "what-the-service-does-a-misbehaving-one");
  assert.is(slug("Set-up"), "set-up");
});

test("every relative link in README.md and docs/*.md resolves (file, and #anchor to a heading)", () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of pages) {
    const file = join(root, page);
    for (const { line, target } of linksOf(file)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      checked++;
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const to = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      const where = `${page}:${line}: ${target}`;
      if (!to.startsWith(root)) {
        broken.push(`${where}: leads out of the repository`);
        continue;
      }
      if (!existsSync(to)) {
        broken.push(`${where}: ${relative(root, to)} does not exist`);
        continue;
      }
      if (anchor !== undefined && anchor !== "") {
        if (statSync(to).isDirectory() || !to.endsWith(".md")) broken.push(`${where}: an anchor into a file that is not Markdown`);
        else if (!anchorsOf(to).has(anchor)) broken.push(`${where}: ${relative(root, to)} has no heading with the anchor #${anchor}`);
      }
    }
  }
  assert.ok(checked > 20, `links checked: ${checked}`);
  assert.equal(broken, []);
});

test.run();
