// `omnibatch emulator`: serves the local emulator of the service until SIGINT/SIGTERM.
// Turns flags and files into an emulator config; all behaviour lives in src/emulator.

import { defineCommand, type CommandIO, type ParsedArgs } from "../Command.js";
import { ExitCode } from "../../exit/ExitCode.js";
import { mergeConfig, realisticTiming, specAnswers, type DeepPartial, type EmulatorConfig } from "../../emulator/EmulatorConfig.js";
import { configInvalid } from "../../emulator/EmulatorConfigInvalid.js";
import { loadConfigFile, loadElementsFile } from "../../emulator/EmulatorConfigFile.js";
import { resolveEmulatorConfig, startEmulator } from "../../emulator/Emulator.js";

const str = (args: ParsedArgs, name: string): string | undefined => {
  const v = args.values[name];
  return typeof v === "string" ? v : undefined;
};

/** The config the flags describe: defaults < --spec-answers < --realistic < --config file < single flags. */
export const emulatorConfigFromArgs = async (args: ParsedArgs): Promise<{ config: EmulatorConfig; host: string; port: number }> => {
  const problems: string[] = [];
  const int = (name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
    const v = str(args, name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < min || n > max) {
      problems.push(`--${name} must be a whole number from ${min} to ${max} (got '${v}')`);
      return undefined;
    }
    return n;
  };
  const num = (name: string, min: number, max: number): number | undefined => {
    const v = str(args, name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (v.trim() === "" || !Number.isFinite(n) || n < min || n > max) {
      problems.push(`--${name} must be a number from ${min} to ${max} (got '${v}')`);
      return undefined;
    }
    return n;
  };
  const port = int("port", 0, 65535) ?? 8787;
  const host = str(args, "host") ?? "127.0.0.1";
  const flags: DeepPartial<EmulatorConfig> = {
    service: str(args, "service"),
    apiKey: str(args, "key"),
    seed: int("seed", 0),
    slots: { video: int("slots-video", 0), image: int("slots-image", 0) },
    timing: { scale: num("time-scale", 0, 1000) },
    failure: { rate: num("fail-rate", 0, 1) },
    billing: {
      mode: str(args, "billing") as "cash" | "unit" | undefined,
      currency: str(args, "currency") as "USD" | "CNY" | undefined,
      balance: str(args, "balance"),
    },
    results: { extraOutputs: args.values["extra-outputs"] === true ? true : undefined },
    faults: {
      visibilityLagMs: int("visibility-lag-ms", 0),
      duplicateExternalId: str(args, "duplicate-ids") as EmulatorConfig["faults"]["duplicateExternalId"] | undefined,
      errorAfterCreateRate: num("error-after-create", 0, 1),
      malformedTask: { rate: num("malformed-task-rate", 0, 1) },
      unrequestedTaskRate: num("unrequested-task-rate", 0, 1),
      stall: { rate: num("stall-rate", 0, 1), mode: str(args, "stall-mode") as "never" | "drip" | undefined },
      resultRedirectTo: str(args, "redirect-results"),
      echoAuthorization: args.values["echo-authorization"] === true ? true : undefined,
      modelLimits: args.values["no-model-limits"] === true ? false : undefined,
    },
  };
  if (problems.length > 0) throw configInvalid("command line", problems);
  let base: DeepPartial<EmulatorConfig> = {};
  if (args.values["spec-answers"] === true) base = specAnswers;
  if (args.values["realistic"] === true) base = mergeConfig(base, { timing: realisticTiming });
  const file = str(args, "config");
  if (file !== undefined) base = mergeConfig(base, await loadConfigFile(file));
  const elementsFile = str(args, "elements");
  if (elementsFile !== undefined) base = { ...base, elements: await loadElementsFile(elementsFile) };
  const patch = mergeConfig(base, flags);
  return { config: resolveEmulatorConfig(patch, undefined, file ?? "command line"), host, port };
};

const waitForSignal = (): Promise<NodeJS.Signals> =>
  new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      resolve(signal);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });

const run = async (args: ParsedArgs, io: CommandIO): Promise<ExitCode> => {
  const { config, host, port } = await emulatorConfigFromArgs(args);
  const emulator = await startEmulator(config, { host, port }).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "EADDRINUSE" || e.code === "EADDRNOTAVAIL" || e.code === "EACCES") {
      throw configInvalid("command line", [
        `cannot listen on ${host}:${port} (${e.code}); choose another --port (0 picks a free one) or --host`,
      ]);
    }
    throw e;
  });
  const t = config.timing;
  io.stdout.write(
    [
      `omnibatch emulator listening on ${emulator.url}`,
      `  service '${config.service}', slots video ${config.slots.video} / image ${config.slots.image}, ` +
        `video ${Math.round(t.video.queuedMs[0] * t.scale + t.video.processingMs[0] * t.scale)}-${Math.round(t.video.queuedMs[1] * t.scale + t.video.processingMs[1] * t.scale)} ms, ` +
        `image ${Math.round(t.image.queuedMs[0] * t.scale + t.image.processingMs[0] * t.scale)}-${Math.round(t.image.queuedMs[1] * t.scale + t.image.processingMs[1] * t.scale)} ms, seed ${config.seed}`,
      `  inspection: ${emulator.url}/_emulator/stats`,
      `  accepted key (development only): ${config.apiKey}`,
      "",
      `export OMNIBATCH_BASE_URL=${emulator.url}`,
      `export OMNIBATCH_API_KEY=${config.apiKey}`,
      "",
      "Press Ctrl-C to stop.",
      "",
    ].join("\n"),
  );
  const signal = await waitForSignal();
  await emulator.close();
  io.stderr.write(`omnibatch emulator: stopped (${signal})\n`);
  return ExitCode.Ok;
};

export const emulatorCommand = defineCommand({
  name: "emulator",
  summary: "Serve a local emulator of the generation service (free dry runs, CI).",
  usage: "omnibatch emulator [--port N] [--host ADDR] [--config FILE.json] [options]",
  description: [
    "Serves all six endpoints of the service on loopback with its envelope, input rules, concurrency slots,",
    "answering as the live service does (Kling's names, 20 ids per query, its error wordings and headers; --spec-answers for the earlier answers),",
    "state transitions, billing, callbacks, signed expiring result links and switchable faults.",
    "Prints its base URL and key as `export` lines. Every knob of the config file (see docs/emulator.md in the",
    "omnibatch repository) can be set in --config FILE.json; the flags below override the file.",
    "Stops cleanly on SIGINT/SIGTERM.",
    "Inspection (loopback, no key): GET /_emulator/stats, GET /_emulator/slots, POST /_emulator/clock {advanceMs},",
    "POST /_emulator/config {patch}, POST /_emulator/reset.",
  ].join("\n"),
  options: {
    port: { type: "string", value: "N", description: "Port to listen on (default 8787; 0 picks a free one)." },
    host: { type: "string", value: "ADDR", description: "Address to listen on (default 127.0.0.1)." },
    config: { type: "string", value: "FILE", description: "JSON file of emulator settings (any subset)." },
    elements: { type: "string", value: "FILE", description: "JSON file with the element library: [{id, name, element_type}]." },
    key: { type: "string", value: "KEY", description: "The bearer key to accept (default omni-dev-key)." },
    service: { type: "string", value: "NAME", description: "The service name in paths and model names (default kling, as the live service)." },
    "spec-answers": {
      type: "boolean",
      description: "Answer as before the live service was known: name svc, 100 ids per query, image not-found 404/1203, videos-only unified queries, no Retry-After or x-request-id.",
    },
    realistic: { type: "boolean", description: "Real durations: video 1-8 minutes, image 10-60 seconds." },
    "time-scale": { type: "string", value: "X", description: "Multiply every task duration by X (e.g. 0.01)." },
    seed: { type: "string", value: "N", description: "Seed of durations, failures and auto counts (default 1)." },
    "slots-video": { type: "string", value: "N", description: "Concurrent video tasks of the account (default 5)." },
    "slots-image": { type: "string", value: "N", description: "Concurrent image slots of the account (default 9)." },
    "fail-rate": { type: "string", value: "P", description: "Probability that a task ends failed (content risk), 0..1." },
    billing: { type: "string", value: "MODE", description: "cash (default) or unit." },
    currency: { type: "string", value: "CUR", description: "USD (default) or CNY." },
    balance: { type: "string", value: "AMOUNT", description: "Account balance; creates past it answer 1102 (default unlimited)." },
    "extra-outputs": { type: "boolean", description: "Add audio, voice and element output items to video results." },
    "visibility-lag-ms": { type: "string", value: "MS", description: "New tasks stay invisible to queries and lists for MS milliseconds." },
    "duplicate-ids": {
      type: "string",
      value: "MODE",
      description: "A reused external_task_id: reject-1201 (default), return-existing, or create-second (a second, paid task).",
    },
    "error-after-create": { type: "string", value: "P", description: "Probability that a create is carried out and then answered 500." },
    "malformed-task-rate": { type: "string", value: "P", description: "Probability that a task item of a query answer is malformed." },
    "unrequested-task-rate": { type: "string", value: "P", description: "Probability that a query answer carries a task nobody asked for." },
    "stall-rate": { type: "string", value: "P", description: "Probability that an API answer stalls (see --stall-mode)." },
    "stall-mode": { type: "string", value: "MODE", description: "never (no answer at all, the default) or drip (one byte a second)." },
    "redirect-results": { type: "string", value: "TO", description: "Result links answer 302: self (same origin) or a base URL." },
    "echo-authorization": { type: "boolean", description: "Error and failure messages echo the request's Authorization header." },
    "no-model-limits": { type: "boolean", description: "Accept what the per-model limits refuse (a silent fallback)." },
  },
  positionals: { min: 0, max: 0, name: "" },
  run,
});
