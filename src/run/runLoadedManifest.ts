// Runs an already loaded manifest to the end and writes its reports, as a Promise.
// Builds the layers the engine needs: the client (from the environment, an explicit
// address, or an in-process emulator), the lockfile store, the downloader and the policy. The CLI's `run` command is a thin wrapper around this.
// An emulated run uses its own lockfile and outputs folder (EmulatedRun.ts), never the real ones.

import { Cause, Clock, Effect, Either, Exit, Layer, Redacted } from "effect";
import { OmniClient, type OmniClientConfig } from "../api/OmniClient.js";
import { startEmulator, type DeepPartial, type EmulatorConfig, type RunningEmulator } from "../emulator/Emulator.js";
import { Downloader } from "../outputs/Downloader.js";
import { runnerOnlyWarning } from "../outputs/runnerOnlyWarning.js";
import { scanResults } from "../outputs/scanResults.js";
import { writeReports } from "../report/writeReports.js";
import { LockStore, type LockStoreOptions } from "../state/LockStore.js";
import type { CallbackListener } from "../callbacks/CallbackListener.js";
import { callbacksWanted, startCallbackListener, webhookSecret, type CallbackSetting } from "./CallbackSetting.js";
import { emulatedManifest } from "./EmulatedRun.js";
import { startChecks } from "./startChecks.js";
import { Engine } from "../engine/Engine.js";
import { fastPolicy, livePolicy, RunPolicy, type Policy } from "../policy/Policy.js";
import { ownFolders } from "../engine/ownFolders.js";
import type { RunEvent, RunSummary } from "../engine/RunEvent.js";
import type { RunnableManifest } from "../engine/RunnableManifest.js";

/** `--emulate` timing: tasks finish in roughly 0.2 to 1 s. */
export const emulateConfig: DeepPartial<EmulatorConfig> = { timing: { scale: 0.3 } };

export interface RunManifestOptions {
  /** Where OMNIBATCH_API_KEY and OMNIBATCH_BASE_URL are read from. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The service's address (overrides OMNIBATCH_BASE_URL). */
  readonly baseUrl?: string;
  /**
   * Run against an in-process emulator (true: quick timing; an object: that configuration),
   * with the emulated lockfile and outputs folder (`emulatedPaths`) instead of the real ones.
   */
  readonly emulate?: boolean | DeepPartial<EmulatorConfig>;
  /** Overrides the manifest's concurrency. */
  readonly concurrency?: number;
  /** Stop after this long (exit 3); the next run continues. */
  readonly maxWaitMs?: number;
  /** Aborting stops the run at once (exit 3), as SIGINT does. */
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: RunEvent) => void;
  /** Retry and polling rhythms. Default: live speed, or quick with `emulate`. */
  readonly policy?: Policy;
  /** Client settings beyond address and key (timeouts, batch size). */
  readonly client?: Partial<Omit<OmniClientConfig, "baseUrl" | "apiKey">>;
  readonly lockStore?: LockStoreOptions;
  /** Write results.jsonl and the billing reports at the end. Default true. */
  readonly reports?: boolean;
  /** Called with the in-process emulator once it listens (tests look at its figures). */
  readonly onEmulator?: (emulator: RunningEmulator) => void;
  /**
   * Callbacks from the service (hints; polling stays the truth). Default: on when the
   * service is on loopback (an emulator), off otherwise. false: off. true or a setting:
   * on, listening on setting.host:port, the service calling setting.url (a public
   * address forwarding there). Signed with $OMNIBATCH_WEBHOOK_SECRET when it is set.
   */
  readonly callbacks?: boolean | CallbackSetting;
  /** Make tasks whose results are lost again, as new attempts (`run --recreate-lost`). */
  readonly recreateLost?: boolean;
}

const squash = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value;
  throw Cause.squash(exit.cause);
};

/** Runs an already loaded manifest. Rejects with a tagged error (LockfileBusy, MissingApiKey...) when it cannot start. */
export const runLoadedManifest = async (loaded: RunnableManifest, options: RunManifestOptions = {}): Promise<RunSummary> => {
  let emulator: RunningEmulator | undefined;
  let listener: CallbackListener | undefined;
  const emulation = options.emulate === true ? emulateConfig : options.emulate === false ? undefined : options.emulate;
  const emulated = emulation !== undefined;
  const manifest = emulated ? emulatedManifest(loaded) : loaded;
  // Emulated runs say so in their first and last events, for people and for scripts.
  const onEvent =
    options.onEvent && emulated
      ? (event: RunEvent) => options.onEvent!(event.type === "start" ? { ...event, emulated: true } : event)
      : options.onEvent;
  try {
    const env = options.env ?? process.env;
    let clientLayer: Layer.Layer<OmniClient, unknown>;
    let serviceUrl = "";
    if (emulation !== undefined) {
      // The in-process emulator signs its callbacks with the same secret the listener checks.
      const secret = options.callbacks !== false ? webhookSecret(env) : undefined;
      emulator = await startEmulator(secret ? { ...emulation, callbacks: { ...emulation.callbacks, secret } } : emulation, { port: 0 });
      options.onEmulator?.(emulator);
      clientLayer = OmniClient.layer({ ...options.client, baseUrl: emulator.url, apiKey: Redacted.make(emulator.apiKey) });
    } else {
      // Checked before the lockfile is touched: a missing key must leave no trace.
      const config = OmniClient.configFromEnv(env, { ...options.client, ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) });
      if (Either.isLeft(config)) throw config.left;
      clientLayer = OmniClient.layer(config.right);
      serviceUrl = config.right.baseUrl;
    }
    const wanted = callbacksWanted(options.callbacks, emulator?.url ?? serviceUrl);
    if (wanted) {
      try {
        listener = await startCallbackListener(wanted, webhookSecret(env));
      } catch (error) {
        onEvent?.({ type: "notice", level: "warn", message: `callbacks off: cannot listen (${(error as Error).message}); following tasks by polling only` });
      }
    }
    const policy = options.policy ?? (emulated ? fastPolicy : livePolicy);
    const policyLayer = RunPolicy.layer(policy);
    const storeLayer = LockStore.layer(manifest.lockfilePath, manifest.name, options.lockStore);
    const downloaderLayer = Downloader.layer(manifest.outputsDir).pipe(Layer.provide(Layer.merge(clientLayer, policyLayer)));
    const engineLayer = Engine.layer.pipe(Layer.provideMerge(Layer.mergeAll(clientLayer, policyLayer, storeLayer, downloaderLayer)));

    const program = Effect.gen(function* () {
      const engine = yield* Engine;
      const store = yield* LockStore;
      // Before anything can be paid for: links out of the outputs folder, unwritable folders.
      yield* startChecks(manifest.outputsDir, manifest.tasks.map((t) => t.dir), manifest.lockfilePath);
      // In CI without a store, results absent at start live only on this runner: said once.
      if (!emulated) {
        const warning = runnerOnlyWarning(scanResults(Object.fromEntries(yield* store.all), manifest.outputsDir, yield* Clock.currentTimeMillis), { ci: env["CI"] === "true", store: false });
        if (warning) onEvent?.({ type: "notice", level: "warn", message: warning });
      }
      const result = yield* engine.run({
        // A changed task must not download over the files of the task it replaces.
        manifest: ownFolders(manifest, yield* store.all),
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        ...(options.maxWaitMs !== undefined ? { maxWaitMs: options.maxWaitMs } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(onEvent ? { onEvent } : {}),
        // Every emulated run starts a new emulator, which knows none of the old tasks.
        ...(emulated ? { freshService: true } : {}),
        ...(listener ? { callbacks: listener } : {}),
        ...(options.recreateLost ? { recreateLost: true } : {}),
      });
      let reports: string[] = [];
      if (options.reports !== false) {
        const lock = yield* store.snapshot;
        const written = yield* Effect.either(
          Effect.tryPromise(() => writeReports({ lock, outputsDir: manifest.outputsDir, manifestName: manifest.name, env: { ...env }, emulated, manifest })),
        );
        if (written._tag === "Right") reports = written.right.files;
        else {
          onEvent?.({ type: "notice", level: "warn", message: `could not write the reports: ${String(written.left.error)}` });
        }
      }
      return { ...result, reports, ...(emulated ? { emulated: true as const } : {}) } satisfies RunSummary;
    });

    const exit = await Effect.runPromiseExit(Effect.provide(program, engineLayer));
    const summary = squash(exit);
    onEvent?.({ type: "summary", ...summary });
    return summary;
  } finally {
    await listener?.close();
    await emulator?.close();
  }
};

