// The one warning a CI run without a store gives (issue 16): its outputs folder started
// without results the lockfile records, so they were fetched from the service again (or
// are lost), and whatever it downloads now lives only on this runner, which is thrown
// away. Pure: the scan of the folder at start comes in as data.

import type { ScannedResult } from "./scanResults.js";

const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The warning's text, or undefined when there is nothing to say. */
export const runnerOnlyWarning = (atStart: readonly ScannedResult[], where: { readonly ci: boolean; readonly store: boolean }): string | undefined => {
  if (!where.ci || where.store) return undefined;
  const absent = atStart.filter((r) => r.verdict.state !== "present");
  if (absent.length === 0) return undefined;
  let earliest: number | undefined;
  let lost = 0;
  for (const r of absent) {
    if (r.verdict.state === "lost") lost++;
    else if (r.verdict.state === "restorable" && r.verdict.deletesAt !== undefined) earliest = Math.min(earliest ?? Infinity, r.verdict.deletesAt);
  }
  const when =
    earliest !== undefined
      ? `the service deletes them 30 days after generation, the first on ${day(earliest)}`
      : "the service deletes them 30 days after generation";
  return (
    `results live only on this runner: the outputs folder started without ${absent.length} of the ${atStart.length} result(s) the lockfile records` +
    `${lost > 0 ? ` (${lost} already lost)` : ""}, and no store is configured. Configure a store for the outputs, or they will be lost when ${when}.`
  );
};
