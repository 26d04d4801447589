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

/** Service text in a cell: every Markdown and HTML mark backslash-escaped (inert, as written), no newline. */
const inert = (text: string): string => text.replace(/[\\`*_{}[\]()#+!|<>&~]/g, (c) => `\\${c}`).replace(/[\r\n]+/g, " ");

/** A charge the run refused (money/chargeCheck.ts): the task and what the answer said. */
export interface RefusedChargeLine {
  readonly id: string;
  readonly job: string;
  readonly taskId?: string;
  readonly charge: string;
  readonly requestId?: string;
}

/**
 * Charges the service answered that cannot be true, refused by the run: a section of
 * billing.md (and so of the CI step summary) apart from the sums, which hold none of them.
 */
export const refusedChargesMarkdown = (refused: readonly RefusedChargeLine[]): string => {
  if (refused.length === 0) return "";
  return [
    "",
    `### Refused charges: ${refused.length}`,
    "",
    "The service answered a charge that cannot be true (negative, not a number, or absurdly large). It is counted in no sum",
    "above nor against the budget, the task's record is left as it was, and the run stopped submitting.",
    "",
    "| task | job | what the answer said | request id |",
    "|---|---|---|---|",
    ...refused.slice(0, LIMIT).map((r) => `| ${inert(r.id)} | ${inert(r.job)} | ${inert(r.charge)} | ${inert(r.requestId ?? "")} |`),
    ...(refused.length > LIMIT ? [`| ... and ${refused.length - LIMIT} more | | | |`] : []),
    "",
  ].join("\n");
};
