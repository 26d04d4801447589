// Text that is not ours (the service's messages and currencies, names and values from
// manifests and data files) placed into Markdown: billing.md and the CI step summary. As
// the report does for HTML (reportHtml.ts escapes and sets text, never markup), it is
// shown as written and never obeyed: no emphasis, link, image, HTML tag, code span or
// table cell break comes out of it. The one place this is decided. Pure.

import { neutralise } from "../api/neutralise.js";

/**
 * What Markdown could read as markup: emphasis (`*`, and `_` unless inside a word, where
 * it never is), code spans, links and images (`[`, `]`), strike-through, a heading, `|`
 * ending a table cell; and a backslash that would escape what follows it (before ASCII
 * punctuation, or last). CommonMark lets any ASCII punctuation be backslash-escaped.
 */
const MARKUP = /[`*[\]|~#]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|\\(?=[!-/:-@[-`{-~]|$)/g;
const HTML: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

/**
 * `text` as inert Markdown text, for a table cell or a sentence: control characters and
 * escapes made visible and line breaks made spaces (`neutralise`: a cell is one line),
 * `&`, `<`, `>` and `"` as entities (no HTML), and Markdown's markup backslash-escaped.
 */
export const markdownText = (text: string | number): string =>
  neutralise(String(text))
    .replace(MARKUP, (c) => `\\${c}`)
    .replace(/[&<>"]/g, (c) => HTML[c]!);

/**
 * `text` as a code span in a sentence (a path, a command; not in a table cell, where `|`
 * splits the row first): shown literally in a monospaced font. The fence is one backtick
 * longer than the longest run inside, so a backtick in the text cannot close it.
 */
export const markdownCode = (text: string): string => {
  const clean = neutralise(text);
  const longest = Math.max(0, ...(clean.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = clean.startsWith("`") || clean.endsWith("`") ? " " : "";
  return `${fence}${pad}${clean}${pad}${fence}`;
};
