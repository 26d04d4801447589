// `omnibatch review M.yaml`: decide on the outputs of the jobs marked `review`. With
// --approve/--reject/--list (a filter each) it works without a browser, for scripts and
// CI; with no flag it serves the review page on 127.0.0.1 (src/cli/reviewServer/ReviewServer.ts),
// its media from the outputs folder or store (`--outputs` overrides the manifest's; the
// flags read only the lockfile and the review file, never the outputs). Decisions go to
// M.review.yaml (M.emulate.review.yaml with --emulate) at once.

import { relative } from "node:path";
import { defineCommand } from "../Command.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { UsageError } from "../UsageError.js";
import { outputsOption, withOutputs } from "../outputsOption.js";
import { loadManifest } from "../../manifest/loadManifest.js";
import { openReviewSession, selectItems } from "../reviewServer/reviewSession.js";
import { countStates, describeItemVars, parseFilter, type ReviewFilter, type ReviewItem } from "../../review/reviewItems.js";
import { neutralise } from "../../api/neutralise.js";
import { serviceInEnv } from "../../rules/serviceNames.js";

const FILTER_HELP = "a job id, then key=value matrix values with dotted paths into data rows, e.g. 'stills product.sku=A-1'";

const shown = (path: string, cwd: string): string => {
  const rel = relative(cwd, path);
  return rel !== "" && !rel.startsWith("..") ? rel : path;
};

export const reviewCommand = defineCommand({
  name: "review",
  summary: "Approve or reject the outputs of jobs marked review: a local page, or --approve/--reject/--list.",
  usage: "omnibatch review <manifest.yaml> [--approve FILTER | --reject FILTER | --list [FILTER]] [--emulate] [--outputs DIR|URL] [--port N] [--host H]",
  description:
    "Outputs of a job with `review: true` reach its for_each jobs only once approved; a rejected\n" +
    "output is never used. Decisions are written at once to M.review.yaml beside the manifest\n" +
    "(M.emulate.review.yaml with --emulate), one entry per output keyed by task, output index and\n" +
    "the file's sha256: a changed file awaits review again.\n" +
    "Without a flag: serves the review page on http://127.0.0.1 (a random port and a random token in\n" +
    "the address, printed); approve/reject each output with buttons or keys, or a filtered\n" +
    "selection at once. Ctrl-C stops it. With outputs in a store (s3://...), the page's images and\n" +
    "videos are streamed from the store through that local server: the browser never talks to the\n" +
    "store and never sees its credentials; a result the store lacks shows as missing.\n" +
    `A FILTER is ${FILTER_HELP}.\n` +
    "Exit 0; 2 when the manifest, the review file or a filter is invalid, nothing has run yet, or the\n" +
    "outputs store cannot be read.",
  options: {
    approve: { type: "string", value: "FILTER", description: "Approve every output the filter matches." },
    reject: { type: "string", value: "FILTER", description: "Reject every output the filter matches." },
    list: { type: "boolean", description: "List the outputs (those a FILTER given after the manifest matches) and their decisions." },
    emulate: { type: "boolean", description: "Review what 'run --emulate' made (M.emulate.lock.json, M.emulate.review.yaml)." },
    json: { type: "boolean", description: "With --list: one JSON object on stdout." },
    port: { type: "string", value: "N", description: "The page's port (default: a free one)." },
    host: { type: "string", value: "HOST", description: "Listen on this address instead of 127.0.0.1 (anyone who can reach it and has the token can decide)." },
    outputs: { ...outputsOption, description: "The page's media from here instead of the manifest's outputs: a folder, or s3://bucket/prefix." },
  },
  positionals: { min: 1, max: 2, name: "manifest" },
  run: async (args, io) => {
    const [file, listFilter] = args.positionals as [string, string | undefined];
    const v = args.values;
    const modes = [v.approve !== undefined, v.reject !== undefined, v.list === true].filter(Boolean).length;
    if (modes > 1) throw new UsageError({ command: "review", message: "give one of --approve, --reject and --list" });
    if (listFilter !== undefined && v.list !== true) {
      throw new UsageError({ command: "review", message: `unexpected '${listFilter}': a filter goes after --approve or --reject, or after the manifest with --list` });
    }
    const loaded = withOutputs(await loadManifest(file, { cwd: io.cwd, service: serviceInEnv(io.env) }), v, io.cwd, "review");
    const session = await openReviewSession(loaded, v.emulate === true);
    if (session.jobs.size === 0) {
      throw new UsageError({ command: "review", message: `no job in ${file} has 'review: true': nothing to review (see docs/review.md)` });
    }
    const filterOf = (text: string | undefined): ReviewFilter => {
      if (text === undefined) return { where: [] };
      const f = parseFilter(text);
      if ("error" in f) throw new UsageError({ command: "review", message: f.error });
      if (f.job !== undefined && !session.jobs.has(f.job)) {
        const known = loaded.jobs.some((j) => j.id === f.job);
        throw new UsageError({
          command: "review",
          message: `${known ? `job '${f.job}' has no 'review: true'` : `no job '${f.job}' in ${file}`}; jobs under review: ${[...session.jobs].join(", ")}. A filter is ${FILTER_HELP}`,
        });
      }
      return f;
    };
    const fileShown = shown(session.reviewFile, io.cwd);
    const summary = (items: readonly ReviewItem[]) => {
      const c = countStates(items);
      return `${items.length} output(s): ${c.approved} approved, ${c.rejected} rejected, ${c.awaiting} awaiting review`;
    };

    if (v.list === true) {
      const items = selectItems(await session.items(), filterOf(listFilter));
      if (v.json) {
        io.stdout.write(`${JSON.stringify({ reviewFile: session.reviewFile, outputs: items, counts: countStates(items) })}\n`);
        return ExitCode.Ok;
      }
      for (const i of items) {
        io.stdout.write(`${neutralise(`${i.state.padEnd(8)}  ${i.job}  ${i.path}  ${describeItemVars(i.vars)}  (${i.task} #${i.output})`)}\n`);
      }
      io.stdout.write(`${summary(items)} (${fileShown})\n`);
      return ExitCode.Ok;
    }

    const decision = v.approve !== undefined ? "approved" : v.reject !== undefined ? "rejected" : undefined;
    if (decision !== undefined) {
      const text = (v.approve ?? v.reject) as string;
      const chosen = selectItems(await session.items(), filterOf(text));
      if (chosen.length === 0) {
        throw new UsageError({ command: "review", message: `no recorded output matches '${text}' (see 'omnibatch review ${file} --list${v.emulate ? " --emulate" : ""}')` });
      }
      const changed = await session.decide(chosen, decision);
      const all = await session.items();
      io.stdout.write(
        `${decision} ${chosen.length} output(s)${changed < chosen.length ? ` (${chosen.length - changed} already were)` : ""}; ${summary(all)} (${fileShown})\n`,
      );
      return ExitCode.Ok;
    }

    const { serveReview } = await import("../reviewServer/ReviewServer.js");
    const { openReviewMedia } = await import("../reviewServer/ReviewMedia.js");
    const media = await openReviewMedia(session.outputsDir, io.env);
    try {
      return await serveReview(session, {
        io,
        media,
        ...(typeof v.port === "string" ? { port: v.port } : {}),
        ...(typeof v.host === "string" ? { host: v.host } : {}),
      });
    } finally {
      await media.close();
    }
  },
});
