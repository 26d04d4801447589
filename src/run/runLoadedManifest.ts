// Runs an already loaded manifest to the end and writes its reports, as a Promise: the
// one run pipeline the CLI's `run` and the library share. Scoped resources first (the
// client, or an in-process emulator; the callback listener; an outputs store; the policy
// and the lockfile store), each released when the run ends; then prepare (prepareRun.ts:
// the lockfile read once, the plan made once, the question before spending, the start
// checks) -> the engine -> finish (finishRun.ts: supersessions, failure groups, reports,
// summary). An emulated run uses its own lockfile and outputs folder (EmulatedRun.ts).

import { Cause, Clock, Effect, Either, Exit, Layer, Redacted } from "effect";
import { OmniClient, type OmniClientConfig } from "../api/OmniClient.js";
import { startEmulator, type DeepPartial, type EmulatorConfig, type RunningEmulator } from "../emulator/Emulator.js";
import { Downloader } from "../outputs/Downloader.js";
import { openStoreSink, type OpenStoreOptions } from "../outputs/openStore.js";
import { isStoreUrl } from "../fs/StoreUrl.js";
import { LockStore, type LockStoreOptions } from "../state/LockStore.js";
import { callbacksWanted, startCallbackListener, webhookSecret, type CallbackSetting } from "./CallbackSetting.js";
import { emulatedManifest } from "./EmulatedRun.js";
import { keepEmulatorState } from "./keptEmulator.js";
import { reviewFileFor } from "../review/ReviewFile.js";
import { readReviewFile } from "../review/readReviewFile.js";
import { indexDecisions, type DecisionIndex } from "../review/reviewDecision.js";
import { Engine } from "../engine/Engine.js";
import { fastPolicy, livePolicy, makePolicy, RunPolicy, withSafetyFloors, type Policy } from "../policy/Policy.js";
import type { SlotPools } from "../policy/slotShare.js";
import { timeScaleFor } from "../policy/timeScale.js";
import { isLoopbackUrl } from "../protocol/Loopback.js";
import type { RunSelection } from "../engine/RunSelection.js";
import type { KnownStringsOf } from "../state/LockfileText.js";
import type { KnownStrings } from "../state/TaskLine.js";
import { serviceIdentity } from "./serviceCheck.js";
import type { RunEvent, RunSummary } from "../engine/RunEvent.js";
import type { RunnableManifest } from "../engine/RunnableManifest.js";
import { prepareRun, type ConfirmPlan, type StartOutlook } from "./prepareRun.js";
import type { ReuseAlso } from "./reuseIndex.js";
import { finishRun } from "./finishRun.js";

export { withExpected } from "./finishRun.js";
export { type ConfirmPlan } from "./prepareRun.js";
export { NotConfirmed } from "./NotConfirmed.js";

/** `--emulate` timing: tasks finish in roughly 0.2 to 1 s. */
export const emulateConfig: DeepPartial<EmulatorConfig> = { timing: { scale: 0.3 } };

export interface RunManifestOptions {
  /** Where OMNIBATCH_API_KEY, OMNIBATCH_BASE_URL and OMNIBATCH_SERVICE are read from. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The service's address (overrides OMNIBATCH_BASE_URL). */
  readonly baseUrl?: string;
  /**
   * Run against an in-process emulator (true: quick timing; an object: that configuration),
   * with the emulated lockfile and outputs folder (`emulatedPaths`) instead of the real ones;
   * the emulated service's tasks and clock are kept beside that lockfile between runs (keptEmulator.ts).
   */
  readonly emulate?: boolean | DeepPartial<EmulatorConfig>;
  /** Overrides the manifest's concurrency. */
  readonly concurrency?: number;
  /** Stop after this long (exit 3); the next run continues. Counted from `maxWaitSince`. */
  readonly maxWaitMs?: number;
  /**
   * When the `maxWaitMs` clock started (Unix ms). Default: when this call began. The CLI
   * passes the process's start: loading the manifest (probing media), the lockfile and
   * the start checks count against the limit too, so a slow start-up (a loaded machine)
   * never makes the run outlive it.
   */
  readonly maxWaitSince?: number;
  /** Aborting stops the run at once (exit 3), as SIGINT does. */
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: RunEvent) => void;
  /** Retry and polling rhythms. Default: live speed, or quick with `emulate`. Against a service not on loopback its safety waits are never below the live ones (`withSafetyFloors`). */
  readonly policy?: Policy;
  /**
   * The value of OMNIBATCH_TIME_SCALE (the CLI passes it): every wait scaled by it, only
   * with `emulate` or a loopback service; otherwise ignored with a warning. `policy` wins.
   */
  readonly timeScale?: string;
  /** Client settings beyond address and key (the service's name, timeouts, batch size). */
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
  /** A run of a chosen part (--only, --where, --failed, a saved plan); default: the whole manifest. */
  readonly selection?: RunSelection;
  /**
   * The question before spending: called once with the run's plan (made once, from the
   * lockfile as the run holds it; with --failed's renewals) before anything changes or is
   * sent. false: nothing is sent and the run fails with NotConfirmed. The CLI asks a
   * person there (and says what a chosen part will do); its time is not counted against `maxWaitMs`.
   */
  readonly confirm?: ConfirmPlan;
  /**
   * A saved plan's lockfile digest (savedPlan.ts lockDigest): checked once the run holds
   * the lockfile, before anything is sent; a different lockfile fails with PlanStale (exit 2).
   */
  readonly expectLockfile?: string;
  /**
   * The lockfile names another service (region) than this run's: abandon its unfinished
   * tasks there (their records kept, marked `abandoned`) and create them again here as
   * new attempts with new ids (--switch-service). Without it such a run is
   * refused (ServiceChanged, exit 2) before anything is sent.
   */
  readonly switchService?: boolean;
  /** Timeouts and part size of the outputs store, when outputs is an `s3://` URL (tests shorten them). */
  readonly store?: Omit<OpenStoreOptions, "env" | "check">;
  /** Make tasks whose results are lost again, as new attempts (`run --recreate-lost`). */
  readonly recreateLost?: boolean;
  /** false (`run --no-reuse`): create every task, never reuse a paid result of the same request elsewhere (issue 31). Default true. */
  readonly reuse?: boolean;
  /** Other manifests run in this process (`run a.yaml b.yaml`): their lockfiles and outputs are looked in for reuse too (runManifests.ts). */
  readonly reuseAlso?: ReuseAlso;
  /** Slot pools shared with the other runs of this process (several manifests in one run: runManifests.ts). */
  readonly slotPools?: SlotPools;
}


const squash = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value;
  throw Cause.squash(exit.cause);
};

/** The plan's strings per task id, for the lockfile's load (LockStoreOptions.knownStrings); the map lives as long as the load. */
const knownStringsOf = (tasks: RunnableManifest["tasks"]): KnownStringsOf => {
  const byId = new Map<string, KnownStrings>();
  for (const t of tasks) byId.set(t.id, t);
  return (id) => byId.get(id);
};

/** A promise's rejection as the effect's failure, the error as it was thrown. */
const attempt = <A>(run: () => Promise<A>): Effect.Effect<A, unknown> => Effect.tryPromise({ try: run, catch: (error) => error });

/** The service the run talks to: an in-process emulator (closed when the run ends), or the address and key from the environment. */
const serviceOf = (options: RunManifestOptions, env: Readonly<Record<string, string | undefined>>, emulation: DeepPartial<EmulatorConfig> | undefined) =>
  Effect.gen(function* () {
    if (emulation !== undefined) {
      // The in-process emulator signs its callbacks with the same secret the listener checks.
      const secret = options.callbacks !== false ? webhookSecret(env) : undefined;
      const emulator: RunningEmulator = yield* Effect.acquireRelease(
        attempt(() => startEmulator(secret ? { ...emulation, callbacks: { ...emulation.callbacks, secret } } : emulation, { port: 0 })),
        (e) => Effect.promise(() => e.close()),
      );
      options.onEmulator?.(emulator);
      return { emulator, serviceUrl: "", clientLayer: OmniClient.layer({ ...options.client, baseUrl: emulator.url, apiKey: Redacted.make(emulator.apiKey) }) };
    }
    // Checked before the lockfile is touched: a missing key must leave no trace.
    const config = OmniClient.configFromEnv(env, { ...options.client, ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) });
    if (Either.isLeft(config)) return yield* Effect.fail(config.left as unknown);
    return { emulator: undefined, serviceUrl: config.right.baseUrl, clientLayer: OmniClient.layer(config.right) };
  });

/** Retry and polling rhythms: the caller's, or from OMNIBATCH_TIME_SCALE (an emulator only), live or quick; never below the live safety waits against a remote service. */
const policyOf = (options: RunManifestOptions, emulated: boolean, url: string, onEvent: ((e: RunEvent) => void) | undefined): Policy => {
  const scaled = timeScaleFor(options.timeScale, { emulated, url });
  if (scaled.warning) onEvent?.({ type: "notice", level: "warn", message: scaled.warning });
  const chosen = options.policy ?? (scaled.scale !== undefined ? makePolicy(scaled.scale) : emulated ? fastPolicy : livePolicy);
  const floored = emulated || isLoopbackUrl(url) ? chosen : withSafetyFloors(chosen);
  // Several manifests in one process share one slot pool per product (runManifests.ts).
  return options.slotPools ? { ...floored, slotPools: options.slotPools } : floored;
};

/** Runs an already loaded manifest. Rejects with a tagged error (LockfileBusy, MissingApiKey...) when it cannot start. */
export const runLoadedManifest = async (loaded: RunnableManifest, options: RunManifestOptions = {}): Promise<RunSummary> => {
  const maxWaitSince = options.maxWaitSince ?? Date.now();
  const chosenEmulation = options.emulate === true ? emulateConfig : options.emulate === false ? undefined : options.emulate;
  // An in-process emulator answers to the name the client uses (--service), unless its configuration names one.
  const emulation =
    chosenEmulation !== undefined && options.client?.service !== undefined && chosenEmulation.service === undefined
      ? { ...chosenEmulation, service: options.client.service }
      : chosenEmulation;
  const emulated = emulation !== undefined;
  const manifest = emulated ? emulatedManifest(loaded) : loaded;
  // Every event carries its time; the start event what the run found and expects (the
  // whole plan, downstream tasks included); emulated runs say so in their first and last events.
  let outlook: StartOutlook | undefined;
  const onEvent = options.onEvent
    ? (event: RunEvent) => {
        const at = new Date().toISOString();
        options.onEvent?.(event.type === "start" ? { ...event, at, ...(emulated ? { emulated: true as const } : {}), ...outlook } : { ...event, at });
      }
    : undefined;
  // Review decisions, read before anything is touched (an invalid file: exit 2, nothing sent).
  const reviews: DecisionIndex | undefined = loaded.jobs.some((j) => j.review) ? indexDecisions(readReviewFile(reviewFileFor(loaded.file, emulated))) : undefined;
  const env = options.env ?? process.env;

  const program = Effect.gen(function* () {
    const { emulator, serviceUrl, clientLayer } = yield* serviceOf(options, env, emulation);
    const wanted = callbacksWanted(options.callbacks, emulator?.url ?? serviceUrl);
    const listener = wanted
      ? yield* Effect.acquireRelease(
          Effect.catchAll(attempt(() => startCallbackListener(wanted, webhookSecret(env))), (error) =>
            Effect.sync(() => {
              onEvent?.({ type: "notice", level: "warn", message: `callbacks off: cannot listen (${(error as Error).message}); following tasks by polling only` });
              return undefined;
            }),
          ),
          (l) => Effect.promise(async () => l?.close()),
        )
      : undefined;
    // Outputs in an object store: opened and listed now, so a store that cannot be used
    // stops the run before anything is created.
    const outputStore = isStoreUrl(manifest.outputsDir)
      ? yield* Effect.acquireRelease(attempt(() => openStoreSink(manifest.outputsDir, { env, ...options.store })), (s) => Effect.promise(() => s.close()))
      : undefined;
    const policyLayer = RunPolicy.layer(policyOf(options, emulated, serviceUrl, onEvent));
    // An emulated run keeps no run trace: its service is saved with the lockfile it matches (keptEmulator.ts).
    // The loaded records share the plan's ids and request hashes where equal (one copy of each held).
    const storeLayer = LockStore.layer(manifest.lockfilePath, manifest.name, {
      ...options.lockStore,
      ...(emulated ? { trace: false } : {}),
      knownStrings: () => knownStringsOf(manifest.tasks),
    });
    const downloaderLayer = Downloader.layer(outputStore ?? manifest.outputsDir).pipe(Layer.provide(Layer.merge(clientLayer, policyLayer)));
    const engineLayer = Engine.layer.pipe(Layer.provideMerge(Layer.mergeAll(clientLayer, policyLayer, storeLayer, downloaderLayer)));
    // Saved at the end only when taken up: a run that never held the lockfile saves nothing.
    let keepEmulator = false;
    const run = Effect.gen(function* () {
      const leftOf = (now: number, asked = 0) => (options.maxWaitMs === undefined ? undefined : options.maxWaitMs - Math.max(0, now - maxWaitSince - asked));
      const prepared = yield* prepareRun({
        manifest,
        emulator,
        serviceUrl,
        env,
        storeOutputs: outputStore !== undefined,
        ...(outputStore ? { outputStore } : {}),
        selection: options.selection,
        reviews,
        expectLockfile: options.expectLockfile,
        switchService: options.switchService === true,
        recreateLost: options.recreateLost === true,
        confirm: options.confirm,
        reuse: options.reuse !== false,
        ...(options.reuseAlso ? { reuseAlso: options.reuseAlso } : {}),
        signal: options.signal,
        maxWaitLeft: (now) => leftOf(now),
        onEvent,
        onTakeUp: () => (keepEmulator = true),
      });
      outlook = prepared.outlook;
      const engine = yield* Engine;
      // What start-up took is already spent of the limit (a person's answer is not).
      const left = leftOf(yield* Clock.currentTimeMillis, prepared.askedMs);
      const result = yield* engine.run({
        manifest: prepared.placed,
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        ...(left !== undefined ? { maxWaitMs: Math.max(0, left) } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(onEvent ? { onEvent } : {}),
        // A new emulated service knows none of the old tasks.
        ...(prepared.fresh ? { freshService: true } : {}),
        ...(listener ? { callbacks: listener } : {}),
        ...(options.selection ? { selection: options.selection } : {}),
        ...(reviews ? { reviews } : {}),
        ...(options.recreateLost ? { recreateLost: true } : {}),
        ...(prepared.walks ? { plan: { walks: prepared.walks } } : {}),
        address: serviceIdentity(emulator?.url ?? serviceUrl),
      });
      const finished = yield* finishRun({ manifest, prepared, result, reviews, env, emulated, outputStore, reports: options.reports !== false, onEvent });
      return finished.summary;
    });
    // The emulated service is saved while the run still holds the lockfile, whatever the outcome.
    const saved = Effect.promise(async () => (emulator !== undefined && keepEmulator ? keepEmulatorState(emulator, manifest.lockfilePath, onEvent) : undefined));
    return yield* Effect.provide(Effect.ensuring(run, saved), engineLayer);
  });
  const summary = squash(await Effect.runPromiseExit(Effect.scoped(program)));
  onEvent?.({ type: "summary", ...summary });
  return summary;
};

