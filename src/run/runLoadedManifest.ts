// Runs an already loaded manifest to the end and writes its reports, as a Promise.
// Builds the layers the engine needs: the client (from the environment, an explicit
// address, or an in-process emulator), the lockfile store, the downloader and the policy. The CLI's `run` command is a thin wrapper around this.
// An emulated run uses its own lockfile and outputs folder (EmulatedRun.ts), never the real ones.

import { Cause, Clock, Effect, Either, Exit, Layer, Redacted } from "effect";
import { OmniClient, type OmniClientConfig } from "../api/OmniClient.js";
import { reachCheck } from "./reachCheck.js";
import { startEmulator, type DeepPartial, type EmulatorConfig, type RunningEmulator } from "../emulator/Emulator.js";
import { Downloader } from "../outputs/Downloader.js";
import { openStoreSink, type OpenStoreOptions } from "../outputs/openStore.js";
import type { StoreSink } from "../outputs/StoreSink.js";
import { writeReportsToStore } from "../report/storeReports.js";
import { isStoreUrl } from "../fs/StoreUrl.js";
import { runnerOnlyWarning } from "../outputs/runnerOnlyWarning.js";
import { scanResults } from "../outputs/scanResults.js";
import { writeReports } from "../report/writeReports.js";
import { LockStore, type LockStoreOptions } from "../state/LockStore.js";
import type { CallbackListener } from "../callbacks/CallbackListener.js";
import { callbacksWanted, startCallbackListener, webhookSecret, type CallbackSetting } from "./CallbackSetting.js";
import { emulatedManifest } from "./EmulatedRun.js";
import { keepEmulatorState, takeUpEmulator } from "./keptEmulator.js";
import { startChecks } from "./startChecks.js";
import { applyServiceRule } from "./applyServiceRule.js";
import { reviewFileFor } from "../review/ReviewFile.js";
import { readReviewFile } from "../review/readReviewFile.js";
import { indexDecisions, type DecisionIndex } from "../review/reviewDecision.js";
import type { LinkScope } from "../outputs/OutputsFolderCheck.js";
import { Engine } from "../engine/Engine.js";
import { fastPolicy, livePolicy, makePolicy, RunPolicy, withSafetyFloors, type Policy } from "../policy/Policy.js";
import type { SlotPools } from "../policy/slotShare.js";
import { timeScaleFor } from "../policy/timeScale.js";
import { isLoopbackUrl } from "../protocol/Loopback.js";
import { ownFolders } from "../engine/ownFolders.js";
import { reviewText } from "../engine/Summary.js";
import type { RunSelection } from "../engine/RunSelection.js";
import { lockDigest, PlanStale } from "../manifest/savedPlan.js";
import type { LockTask } from "../state/LockFile.js";
import type { KnownStringsOf } from "../state/LockfileText.js";
import type { KnownStrings } from "../state/TaskLine.js";
import { abandonedSuccessors, EMULATOR_SERVICE, serviceIdentity } from "./serviceCheck.js";
import type { JobCounts, JobOutlook, RunEvent, RunSummary } from "../engine/RunEvent.js";
import type { RunnableManifest } from "../engine/RunnableManifest.js";
import { diffPlan, supersessions, type PlanResult } from "../manifest/diffPlan.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import { runTotals } from "../manifest/runTotals.js";
import { renewFailedOf } from "../manifest/selection.js";
import { cashByCurrency } from "../money/charges.js";
import { groupFailures } from "../report/failureGroups.js";
import { formatRunStepSummary } from "../report/runStepSummary.js";
import { shapeOf } from "../report/manifestLocations.js";
import { plannable, standings, type Standings } from "../report/standing.js";
import type { LockFile } from "../state/LockFile.js";
import { foreignLinesWarning } from "../state/foreignLines.js";
import { reuseResults } from "./reuseResults.js";

/** What the start event adds about the whole plan, when the manifest can be planned (a LoadedManifest). */
type StartOutlook = Pick<Extract<RunEvent, { type: "start" }>, "total" | "totals" | "resume" | "spentBefore" | "budget" | "downstream">;

const isLoaded = (m: RunnableManifest): m is RunnableManifest & LoadedManifest => "expectedDownstreamCount" in m && "downstreamEstimate" in m;

const startOutlook = (
  manifest: RunnableManifest,
  lock: LockFile,
  freshService: boolean,
  spentBefore: Record<string, string>,
  plan?: PlanResult,
  selection?: RunSelection,
  reviews?: DecisionIndex,
): StartOutlook => {
  const base: StartOutlook = { spentBefore, ...(manifest.budget ? { budget: manifest.budget } : {}) };
  if (!isLoaded(manifest)) return base;
  const recorded = Object.keys(lock.tasks).length ? lock : undefined;
  // A run of a chosen part counts what it will do: --failed's new attempts are to create
  // (the engine makes them), work it leaves out is not counted; a saved plan creates only its ids.
  const totals = selection
    ? runTotals(diffPlan(manifest, recorded, { ...renewFailedOf(selection, selection.selects), ...(reviews ? { reviews } : {}) }), freshService, (e) =>
        selection.keeps(e) && ((e.mark !== "+" && e.mark !== "~") || selection.mayCreate?.(e.id) !== false),
      )
    : runTotals(plan ?? diffPlan(manifest, recorded, reviews ? { reviews } : {}), freshService);
  return {
    ...base,
    total: totals.total,
    totals: totals.jobs,
    ...(totals.resume ? { resume: totals.resume } : {}),
    downstream: shapeOf(manifest).downstream,
  };
};

/** The plan of an empty lockfile as standings() reads it: no recorded task to stand anywhere. */
const NO_PLAN: Pick<PlanResult, "entries"> = { entries: [] };

/**
 * The start event's outlook, the supersessions of the lockfile as the run starts and the
 * tasks' standings (what the reports need of the plan), from one plan diff. Only the
 * supersessions and the standings of tasks not current (a few) outlive this call, not
 * the plan of every task: the run's generator would hold it until the end.
 */
const startPlan = (
  manifest: RunnableManifest,
  lock: LockFile,
  freshService: boolean,
  spentBefore: Record<string, string>,
  selection: RunSelection | undefined,
  /** The decisions the run plans with: the standings are those plan and status tell. */
  reviews: DecisionIndex | undefined,
): { outlook: StartOutlook; replaced: [string, string][] | undefined; standings: Standings | undefined } => {
  const plan = isLoaded(manifest) && Object.keys(lock.tasks).length ? diffPlan(manifest, lock, reviews ? { reviews } : {}) : undefined;
  return {
    outlook: startOutlook(manifest, lock, freshService, spentBefore, plan, selection, reviews),
    replaced: plan ? supersessions(plan, lock) : undefined,
    // As writeReports would work them out (standingsFor) for this lockfile; an empty one has none to tell.
    standings: !plannable(manifest) ? undefined : plan ? standings(lock, plan) : Object.keys(lock.tasks).length === 0 ? standings(lock, NO_PLAN) : undefined,
  };
};

/** The run's counts per job with the tasks expected but not made yet (downstream of unfinished work) as queued. */
export const withExpected = (
  jobs: RunSummary["jobs"],
  totals: Readonly<Record<string, JobOutlook>> | undefined,
  notMade: Readonly<Record<string, number>> | undefined,
): RunSummary["jobs"] => {
  if (!totals) return jobs;
  const out: Record<string, JobCounts> = {};
  for (const [job, c] of Object.entries(jobs)) {
    const expected = (totals[job]?.total ?? 0) - (notMade?.[job] ?? 0);
    out[job] = expected > c.total ? { ...c, total: expected, queued: c.queued + expected - c.total } : c;
  }
  return out;
};

const notMadeSince = (after: Readonly<Record<string, number>>, before: Readonly<Record<string, number>>): Record<string, number> =>
  Object.fromEntries(Object.entries(after).map(([job, n]) => [job, Math.max(0, n - (before[job] ?? 0))]));

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
  /** Slot pools shared with the other runs of this process (several manifests in one run: runManifests.ts). */
  readonly slotPools?: SlotPools;
}

/** The step summary's line about outputs awaiting review, when any. */
const reviewNote = (jobs: RunSummary["jobs"]): { stepSummaryNote?: string } => {
  const text = reviewText(jobs);
  return text ? { stepSummaryNote: `Review needed: ${text} (omnibatch review, then run again)` } : {};
};

/**
 * The task folders the start checks look at: within those a run may create and download
 * into; only on the way to those of tasks the lockfile records as downloaded (a rerun
 * writes there at most a sidecar, by rename), so finished tasks cost no listing each.
 */
const linkScope = (tasks: RunnableManifest["tasks"], recorded: ReadonlyMap<string, LockTask>): LinkScope => {
  const inside: string[] = [];
  const onTheWay: string[] = [];
  for (const task of tasks) (recorded.get(task.id)?.state === "downloaded" ? onTheWay : inside).push(task.dir);
  return { inside, onTheWay };
};

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

/** Runs an already loaded manifest. Rejects with a tagged error (LockfileBusy, MissingApiKey...) when it cannot start. */
export const runLoadedManifest = async (loaded: RunnableManifest, options: RunManifestOptions = {}): Promise<RunSummary> => {
  const maxWaitSince = options.maxWaitSince ?? Date.now();
  let emulator: RunningEmulator | undefined;
  let listener: CallbackListener | undefined;
  let outputStore: StoreSink | undefined;
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
        const shown = event.type === "start" ? { ...event, at, ...(emulated ? { emulated: true as const } : {}), ...outlook } : { ...event, at };
        options.onEvent?.(shown);
      }
    : undefined;
  // Review decisions, read before anything is touched (an invalid file: exit 2, nothing sent).
  const reviewFile = reviewFileFor(loaded.file, emulated);
  const reviewing = loaded.jobs.some((j) => j.review);
  const reviews: DecisionIndex | undefined = reviewing ? indexDecisions(readReviewFile(reviewFile)) : undefined;
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
    // Outputs in an object store: opened and listed now, so a store that cannot be used
    // stops the run before anything is created.
    if (isStoreUrl(manifest.outputsDir)) outputStore = await openStoreSink(manifest.outputsDir, { env, ...options.store });
    // OMNIBATCH_TIME_SCALE only for an emulator; against another service the safety waits stay real (timeScale.ts).
    const scaled = timeScaleFor(options.timeScale, { emulated, url: serviceUrl });
    if (scaled.warning) onEvent?.({ type: "notice", level: "warn", message: scaled.warning });
    const chosen = options.policy ?? (scaled.scale !== undefined ? makePolicy(scaled.scale) : emulated ? fastPolicy : livePolicy);
    const floored = emulated || isLoopbackUrl(serviceUrl) ? chosen : withSafetyFloors(chosen);
    const policy = options.slotPools ? { ...floored, slotPools: options.slotPools } : floored;
    const policyLayer = RunPolicy.layer(policy);
    // An emulated run keeps no run trace: its service is saved with the lockfile it matches (keptEmulator.ts).
    // The loaded records share the plan's ids and request hashes where equal (one copy of each held).
    const storeLayer = LockStore.layer(manifest.lockfilePath, manifest.name, {
      ...options.lockStore,
      ...(emulated ? { trace: false } : {}),
      knownStrings: () => knownStringsOf(manifest.tasks),
    });
    const downloaderLayer = Downloader.layer(outputStore ?? manifest.outputsDir).pipe(Layer.provide(Layer.merge(clientLayer, policyLayer)));
    const engineLayer = Engine.layer.pipe(Layer.provideMerge(Layer.mergeAll(clientLayer, policyLayer, storeLayer, downloaderLayer)));

    let current = "";
    // Whether the service knows none of the lockfile's tasks: a new emulated one.
    let fresh = false;
    // Saved at the end only when taken up: a run that never held the lockfile saves nothing.
    let keepEmulator = false;
    const program = Effect.gen(function* () {
      const engine = yield* Engine;
      const store = yield* LockStore;
      // What the run learnt about the files (its start check, its downloads) spares the reports a second stat of each.
      const downloader = yield* Downloader;
      if (options.expectLockfile !== undefined && lockDigest(yield* store.snapshot) !== options.expectLockfile) {
        return yield* Effect.fail(
          new PlanStale({ message: `the lockfile ${manifest.lockfilePath} changed since the plan was made (another run, or an edit): nothing was sent; make the plan again` }),
        );
      }
      // The region rule (serviceCheck.ts): before anything is sent.
      current = emulated ? EMULATOR_SERVICE : serviceIdentity(serviceUrl);
      // Nothing at the service yet: an address where nothing answers stops the run before
      // the lockfile records this service or anything changes (reachCheck.ts).
      const reach = emulated
        ? Effect.void
        : Effect.gen(function* () {
            yield* reachCheck(yield* OmniClient, current, yield* store.view, manifest.tasks.map((t) => t.id), {
              signal: options.signal,
              withinMs: options.maxWaitMs === undefined ? undefined : options.maxWaitMs - (Date.now() - maxWaitSince),
            });
          });
      yield* applyServiceRule(current, manifest.lockfilePath, options.switchService === true, onEvent, reach);
      // Lines of another manifest (foreignLines.ts): kept as they are, and said with their lines.
      const foreign = foreignLinesWarning(manifest.lockfilePath, manifest.name, store.foreignLines);
      if (foreign) onEvent?.({ type: "notice", level: "warn", message: foreign });
      // Read before the engine starts (no put in between): the store's map, not a copy.
      const recorded = yield* store.view;
      // The emulated service takes up the tasks it kept at the end of the run before, once
      // this run holds the lockfile (keptEmulator.ts); without them it is a new service.
      if (emulator !== undefined) {
        fresh = takeUpEmulator(emulator, manifest.lockfilePath, recorded, onEvent);
        keepEmulator = true;
      }
      // A changed task must not download over the files of the task it replaces.
      const placed = ownFolders(manifest, recorded);
      // Before anything can be paid for: links out of the outputs folder, unwritable folders.
      yield* startChecks(manifest.outputsDir, linkScope(placed.tasks, recorded), manifest.lockfilePath);
      // Paid results of the same request elsewhere: copied and recorded before anything is planned (reuseResults.ts).
      if (isLoaded(manifest)) yield* reuseResults(manifest, store, { emulated, service: current, off: options.reuse === false, ...(reviews ? { reviews } : {}), ...(options.selection ? { keeps: options.selection.keeps } : {}), ...(onEvent ? { onEvent } : {}) });
      // In CI without a store, results absent at start live only on this runner: said once.
      // (The folder is looked at only then: a local run's start pays no stat per recorded file.)
      if (!emulated && !outputStore && env["CI"] === "true") {
        const warning = runnerOnlyWarning(scanResults(Object.fromEntries(yield* store.all), manifest.outputsDir, yield* Clock.currentTimeMillis), { ci: true, store: false });
        if (warning) onEvent?.({ type: "notice", level: "warn", message: warning });
      }
      const before = yield* store.snapshot;
      const beforeRun = before;
      const spentBefore = cashByCurrency(Object.values(before.tasks).map((t) => t.billing), manifest.budget?.currency);
      // The plan and failure groups of the lockfile as the run starts; reused at the end when
      // the run changed no record (a rerun with nothing to do: 100,000 tasks diffed once, not twice).
      const changesAtStart = yield* store.changes;
      const start = startPlan(manifest, before, fresh, spentBefore, options.selection, reviews);
      outlook = start.outlook;
      const replacedAtStart = start.replaced;
      const standingsAtStart = start.standings;
      // The plan leaves out what earlier failures will not make; this run's failures are taken out at the end.
      const groupsAtStart = isLoaded(manifest) ? groupFailures(before, shapeOf(manifest)) : undefined;
      const notMadeBefore = groupsAtStart?.notMade ?? {};
      const result = yield* engine.run({
        manifest: placed,
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        // What start-up took is already spent of the limit.
        ...(options.maxWaitMs !== undefined ? { maxWaitMs: Math.max(0, options.maxWaitMs - Math.max(0, Date.now() - maxWaitSince)) } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(onEvent ? { onEvent } : {}),
        // A new emulated service knows none of the old tasks.
        ...(fresh ? { freshService: true } : {}),
        ...(listener ? { callbacks: listener } : {}),
        ...(options.selection ? { selection: options.selection } : {}),
        ...(reviews ? { reviews } : {}),
        ...(options.recreateLost ? { recreateLost: true } : {}),
        address: serviceIdentity(emulator?.url ?? serviceUrl),
      });
      // Tasks replaced (`~`) by a task this or an earlier run created say so in the lockfile;
      // so do tasks abandoned at another service, once their next attempt here was created.
      // The records as the run left them are read one at a time from here (frozenSnapshot):
      // each pass below (plan diff, failure groups, reports) holds none of them, where a
      // snapshot decoded every held line at once (the highest RSS of a 200,000-task run).
      let after: LockFile | undefined;
      let standingsAtEnd: Standings | undefined;
      const unchanged = (yield* store.changes) === changesAtStart;
      {
        const before: LockFile = unchanged ? beforeRun : yield* store.frozenSnapshot;
        const plan = isLoaded(manifest) && !(unchanged && replacedAtStart) ? diffPlan(manifest, before, reviews ? { reviews } : {}) : undefined;
        const replacedHere = plan ? supersessions(plan, before) : isLoaded(manifest) && replacedAtStart ? replacedAtStart : [];
        const replaced = [...replacedHere, ...abandonedSuccessors(before.tasks)];
        const now = Date.now();
        for (const [old, by] of replaced) yield* store.put(old, { ...before.tasks[old]!, superseded_by: by, updated_at: now });
        if (replaced.length) yield* store.flush;
        else {
          // Nothing replaced: the snapshot just made is still the lockfile (no second copy of
          // every record), and the plan just made its plan: the reports' standings come from
          // it, as writeReports would work them out (standingsFor), without a second plan.
          after = before;
          if (plan && plannable(manifest)) standingsAtEnd = standings(before, plan);
        }
      }
      after ??= yield* store.frozenSnapshot;
      const failureGroups = isLoaded(manifest) ? (after === beforeRun && groupsAtStart ? groupsAtStart : groupFailures(after, shapeOf(manifest))) : undefined;
      const told = {
        ...result,
        // Downstream tasks that do not exist yet are still work to do: counted as queued.
        // (Only when the run stopped early: a finished run made every downstream task its upstream results allow.)
        jobs:
          result.outcome === "done" || result.outcome === "failed"
            ? result.jobs
            : withExpected(result.jobs, outlook?.totals, failureGroups && notMadeSince(failureGroups.notMade, notMadeBefore)),
        ...(manifest.budget ? { budget: manifest.budget } : {}),
        ...(failureGroups ? { failureGroups } : {}),
        ...(emulated ? { emulated: true as const } : {}),
      };
      let reports: string[] = [];
      if (options.reports !== false) {
        // The CI step summary starts with the outcome; the billing tables follow.
        const stepHead = formatRunStepSummary({ ...told, name: manifest.name });
        const written = yield* Effect.either(
          Effect.tryPromise(() =>
            outputStore
              ? writeReportsToStore({ lock: after, manifestName: manifest.name, env: { ...env }, emulated, manifest, stepHead, ...reviewNote(result.jobs), ...(reviews ? { reviews } : {}) }, outputStore)
              : writeReports({
                  lock: after,
                  outputsDir: manifest.outputsDir,
                  manifestName: manifest.name,
                  env: { ...env },
                  emulated,
                  manifest,
                  stepHead,
                  seen: downloader.seen,
                  ...(result.refusedCharges ? { refusedCharges: result.refusedCharges } : {}),
                  ...reviewNote(result.jobs),
                  ...(reviews ? { reviews } : {}),
                  // The lockfile is the one the run started with: so are the standings.
                  ...(after === beforeRun && standingsAtStart ? { standings: standingsAtStart } : standingsAtEnd ? { standings: standingsAtEnd } : {}),
                }),
          ),
        );
        if (written._tag === "Right") {
          reports = written.right.files;
        } else {
          onEvent?.({ type: "notice", level: "warn", message: `could not write the reports: ${String(written.left.error)}` });
        }
      }
      const summary = { ...told, reports } satisfies RunSummary;
      return summary;
    });

    // The emulated service is saved while the run still holds the lockfile, whatever the outcome.
    const saved = Effect.promise(async () => (emulator !== undefined && keepEmulator ? keepEmulatorState(emulator, manifest.lockfilePath, onEvent) : undefined));
    const exit = await Effect.runPromiseExit(Effect.provide(Effect.ensuring(program, saved), engineLayer));
    const summary = squash(exit);
    onEvent?.({ type: "summary", ...summary });
    return summary;
  } finally {
    await listener?.close();
    await outputStore?.close();
    await emulator?.close();
  }
};

