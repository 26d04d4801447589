// `omnibatch verify M.yaml [--fix]`: hashes every result the lockfile records (in the
// outputs folder or store) against its record and names each difference; with --fix,
// fetches again from the service what it still holds. Thin: the checking is
// outputs/verifyResults.ts, the fetching again run/fixResults.ts.

import { Cause, Effect, Either, Exit } from "effect";
import { neutralise } from "../../api/neutralise.js";
import { OmniClient } from "../../api/OmniClient.js";
import { describeDifference, recordedResults, verifyFolder, verifyStore, type ResultDifference } from "../../outputs/verifyResults.js";
import type { StoreSink } from "../../outputs/StoreSink.js";
import { isStoreUrl } from "../../fs/StoreUrl.js";
import { defineCommand } from "../Command.js";
import { commonOptions } from "../commonOptions.js";
import { timeScaleVariable } from "../../policy/timeScale.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { outputsOption } from "../outputsOption.js";
import { emulateOption, locationsFor, requireLockFile, shownPath } from "./status.js";

export const verifyCommand = defineCommand({
  name: "verify",
  summary: "Hash every recorded result against the lockfile; --fix fetches again what differs.",
  usage: "omnibatch verify <manifest.yaml> [--fix [--base-url URL]] [--emulate] [--outputs DIR|URL] [--json]",
  description:
    "Reads every result the lockfile records as downloaded (in the outputs folder, or the outputs store)\n" +
    "and compares its size and sha256 with the record: a file missing, cut short, replaced (zeros of the\n" +
    "same size) or a record whose sha256 was edited is named with the task, the file, and what was\n" +
    "expected against what was found. Nothing is sent to the service unless --fix is given: then each\n" +
    "differing result is fetched again from the service that made it (with $OMNIBATCH_API_KEY), through\n" +
    "the run's download path, and its record updated; a task is never created. Takes the run lock with\n" +
    "--fix. Exit 0 when every result is as recorded (after --fix: when every difference was fixed), 1 when\n" +
    "a difference remains (each named), 2 for a bad command line, manifest or lockfile.",
  options: {
    fix: { type: "boolean", description: "Fetch again from the service what differs (never creates a task)." },
    "base-url": commonOptions["base-url"],
    emulate: emulateOption,
    outputs: outputsOption,
    json: { ...commonOptions.json, description: "Print the differences (and what --fix did) as one JSON object." },
  },
  positionals: { min: 1, max: 1, name: "manifest" },
  run: async (args, io) => {
    const manifest = args.positionals[0]!;
    const emulated = args.values.emulate === true;
    const where = await locationsFor(manifest, io.cwd, emulated, args.values, "verify");
    const lock = await requireLockFile(where.lockfilePath, manifest, io.cwd, emulated);
    const results = recordedResults(lock);
    let sink: StoreSink | undefined;
    if (isStoreUrl(where.outputsDir)) {
      const { openStoreSink } = await import("../../outputs/openStore.js");
      sink = await openStoreSink(where.outputsDir, { env: io.env });
    }
    try {
      const check = () => (sink ? verifyStore(results, sink) : verifyFolder(results, where.outputsDir));
      const found = await check();
      let remaining: readonly ResultDifference[] = found;
      let fix: { fetched: readonly string[]; notFixed: readonly { id: string; why: string }[] } | undefined;
      if (args.values.fix === true && found.length > 0) {
        const config = OmniClient.configFromEnv(io.env, typeof args.values["base-url"] === "string" ? { baseUrl: args.values["base-url"] } : {});
        if (Either.isLeft(config)) throw config.left;
        const { fixResults } = await import("../../run/fixResults.js");
        const exit = await Effect.runPromiseExit(
          fixResults({ differences: found, lockfilePath: where.lockfilePath, manifestName: where.name, outputs: sink ?? where.outputsDir, client: config.right, timeScale: io.env[timeScaleVariable] }),
        );
        if (Exit.isFailure(exit)) throw Cause.squash(exit.cause);
        fix = exit.value;
        // Checked again against the records as they are now.
        const after = recordedResults((await requireLockFile(where.lockfilePath, manifest, io.cwd, emulated)));
        remaining = await (sink ? verifyStore(after, sink) : verifyFolder(after, where.outputsDir));
      }
      if (args.values.json) {
        io.stdout.write(`${JSON.stringify({ checked: results.length, differences: found, ...(fix ? { fix, remaining } : {}) })}\n`);
      } else {
        const lines = [
          found.length === 0
            ? `All ${results.length} recorded result(s) in ${shownPath(where.outputsDir, io.cwd)} are as the lockfile records them (size and sha256).`
            : `${found.length} of ${results.length} recorded result(s) in ${shownPath(where.outputsDir, io.cwd)} differ from the lockfile:`,
          ...found.map((d) => `  ${describeDifference(d)}`),
        ];
        if (fix) {
          lines.push(`--fix: fetched again ${fix.fetched.length} task(s)' results from the service${fix.fetched.length ? ` (${fix.fetched.join(", ")})` : ""}.`);
          for (const n of fix.notFixed) lines.push(`  NOT FIXED ${n.id}: ${n.why}`);
          lines.push(remaining.length === 0 ? "Every result is now as recorded." : `${remaining.length} difference(s) remain:`, ...remaining.map((d) => `  ${describeDifference(d)}`));
        } else if (found.length > 0) {
          lines.push(`'omnibatch verify ${manifest} --fix' fetches them again from the service (never creating a task).`);
        }
        io.stdout.write(`${lines.map(neutralise).join("\n")}\n`);
      }
      return remaining.length > 0 ? ExitCode.TasksFailed : ExitCode.Ok;
    } finally {
      await sink?.close();
    }
  },
});
