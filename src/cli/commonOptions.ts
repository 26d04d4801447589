// Flags shared by the commands that talk to the service. Each command picks the ones it
// uses, so help shows only what applies.

import type { OptionSpec, ParsedArgs } from "./Command.js";
import { resolveServiceName } from "../rules/serviceNames.js";

export const commonOptions = {
  "base-url": {
    type: "string",
    value: "URL",
    description:
      "Address of the service (default: $OMNIBATCH_BASE_URL, else https://api-singapore.klingai.com; mainland China: https://api-beijing.klingai.com).",
  },
  service: {
    type: "string",
    value: "NAME",
    description: "The service's name in model names and the video path (default: $OMNIBATCH_SERVICE, else kling; a gateway may use another).",
  },
  emulate: {
    type: "boolean",
    description: "Start an in-process emulator of the service and run against it.",
  },
  json: { type: "boolean", description: "Print NDJSON events / data on stdout, nothing else." },
  concurrency: {
    type: "string",
    value: "N",
    description: "Tasks in flight at once per product type (overrides the manifest).",
  },
  "max-wait": {
    type: "string",
    value: "DURATION",
    description: "Stop after this long (e.g. 90s, 25m, 2h) and exit 3; the next run continues.",
  },
  yes: { type: "boolean", description: "Do not ask for confirmation." },
  quiet: { type: "boolean", description: "Print only the final summary and errors." },
} as const satisfies Record<string, OptionSpec>;

/**
 * --service or OMNIBATCH_SERVICE that cannot be a name (exit 2). A plain Error with a tag,
 * not a Data.TaggedError: `validate` loads no part of Effect (ManifestInvalid's reason too).
 */
export class ServiceNameInvalid extends Error {
  readonly _tag = "ServiceNameInvalid" as const;
}

/** The service's name from --service, else OMNIBATCH_SERVICE, else kling; a bad name is ServiceNameInvalid (exit 2). */
export const serviceNameOf = (values: ParsedArgs["values"], env: Readonly<Record<string, string | undefined>>): string => {
  const flag = values["service"];
  const resolved = resolveServiceName(env, typeof flag === "string" ? flag : undefined);
  if ("problem" in resolved) throw new ServiceNameInvalid(resolved.problem);
  return resolved.name;
};
