// The lost results as a Markdown section, for billing.md and so the CI step summary
// (issue 16): counted apart and named by job and matrix values. Pure.

import { resultName, type LostResult } from "../outputs/scanResults.js";
import { markdownText } from "./markdownText.js";

const LIMIT = 50;


export const lostMarkdown = (lost: readonly LostResult[]): string => {
  if (lost.length === 0) return "";
  const rows = lost.slice(0, LIMIT).map((l) => {
    const date = l.at !== undefined ? new Date(l.at).toISOString().slice(0, 10) : "";
    return `| ${markdownText(resultName({ ...l, index: 0 }))} | ${l.why === "deleted" ? "deleted at the service" : "past the service's 30 days"} ${date} |`;
  });
  return [
    "",
    `### Lost results: ${lost.length}`,
    "",
    "Not in the outputs folder (nor a store) and deleted at the service. Their records stay in the lockfile;",
    "`omnibatch run --recreate-lost` makes them again, at a cost.",
    "",
    "| result | why |",
    "|---|---|",
    ...rows,
    ...(lost.length > LIMIT ? [`| ... and ${lost.length - LIMIT} more (see results.jsonl) | |`] : []),
    "",
  ].join("\n");
};
