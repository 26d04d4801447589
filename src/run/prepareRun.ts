// A run's first stage, inside the engine's layers: the saved plan's lockfile check, the
// lockfile read once and the plan made once from it (src/plan/), the question before
// spending (a callback the caller supplies: the CLI asks a person), the service rule and
// the start checks; then what the engine and the end of the run need of the plan. Nothing
// is sent before this stage ends.

import { Clock, Effect } from "effect";
import { OmniClient } from "../api/OmniClient.js";
import type { RunningEmulator } from "../emulator/Emulator.js";
import { ownFolders } from "../engine/ownFolders.js";
import type { RunEvent } from "../engine/RunEvent.js";
import type { RunnableManifest } from "../engine/RunnableManifest.js";
import type { RunSelection } from "../engine/RunSelection.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import { cashByCurrency } from "../money/charges.js";
import type { LinkScope } from "../outputs/OutputsFolderCheck.js";
import { runnerOnlyWarning } from "../outputs/runnerOnlyWarning.js";
import { scanResults } from "../outputs/scanResults.js";
import { diffPlan, supersessions, walksOf, type DiffOptions, type PlanEntry, type PlanResult } from "../plan/diffPlan.js";
import type { AttemptWalk } from "../plan/attempts.js";
import { runTotals, startBuckets } from "../plan/runTotals.js";
import { lostCounts } from "../engine/Planning.js";
import { forgetOldService } from "../engine/Recovery.js";
import { Downloader } from "../outputs/Downloader.js";
import { lockDigest, PlanStale } from "../plan/savedPlan.js";
import { groupFailures } from "../report/failureGroups.js";
import type { Failures } from "../engine/Failures.js";
import { shapeOf } from "../report/manifestLocations.js";
import { plannable, standings, type Standings } from "../report/standing.js";
import type { DecisionIndex } from "../review/reviewDecision.js";
import { foreignLinesWarning } from "../state/foreignLines.js";
import type { LockFile, LockTask } from "../state/LockFile.js";
import { LockStore } from "../state/LockStore.js";
import type { StoreSink } from "../outputs/StoreSink.js";
import { applyServiceRule } from "./applyServiceRule.js";
import { takeUpEmulator } from "./keptEmulator.js";
import { reachCheck } from "./reachCheck.js";
import { EMULATOR_SERVICE, serviceIdentity } from "./serviceCheck.js";
import { startChecks } from "./startChecks.js";
import { planWithReuse, reuseResults } from "./reuseResults.js";
import type { ReuseAlso } from "./reuseIndex.js";
import { NotConfirmed } from "./NotConfirmed.js";

/** The question before spending: given the run's plan and the lockfile it was made from, go ahead (true) or send nothing (false). */
export type ConfirmPlan = (plan: PlanResult, lock: LockFile) => Promise<boolean> | boolean;

/** What the start event adds about the whole plan, when the manifest can be planned (a LoadedManifest). */
export type StartOutlook = Pick<Extract<RunEvent, { type: "start" }>, "total" | "totals" | "resume" | "spentBefore" | "budget" | "downstream" | "startBuckets">;

export const isLoaded = (m: RunnableManifest): m is RunnableManifest & LoadedManifest => "expectedDownstreamCount" in m && "downstreamEstimate" in m;

/** The plan of an empty lockfile as standings() reads it: no recorded task to stand anywhere. */
const NO_PLAN: Pick<PlanResult, "entries"> = { entries: [] };

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

export interface PrepareInput {
  readonly manifest: RunnableManifest;
  readonly emulator: RunningEmulator | undefined;
  readonly serviceUrl: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly storeOutputs: boolean;
  /** The run's outputs store, when its outputs are in one: the reuse step writes through it, so its listing knows what was placed. */
  readonly outputStore?: StoreSink;
  readonly selection: RunSelection | undefined;
  readonly reviews: DecisionIndex | undefined;
  readonly expectLockfile: string | undefined;
  readonly switchService: boolean;
  /** `run --recreate-lost`: the run's plan makes tasks with lost results again, as next attempts. */
  readonly recreateLost: boolean;
  readonly confirm: ConfirmPlan | undefined;
  /** Paid results of the same request in other lockfiles are reused (issue 31; `--no-reuse`: false). */
  readonly reuse: boolean;
  /** Other manifests of this process's run whose lockfiles are looked in for reuse too (runManifests.ts). */
  readonly reuseAlso?: ReuseAlso;
  readonly signal: AbortSignal | undefined;
  /** Left of --max-wait when this stage starts (undefined: no limit). */
  readonly maxWaitLeft: (now: number) => number | undefined;
  readonly onEvent: ((event: RunEvent) => void) | undefined;
  /** Told once the kept emulator took up this lockfile's tasks (it is saved at the end, whatever the outcome). */
  readonly onTakeUp: () => void;
}

export interface Prepared {
  /** The manifest the engine runs: tasks placed in folders of their own where another task's files are. */
  readonly placed: RunnableManifest;
  readonly fresh: boolean;
  readonly current: string;
  readonly before: LockFile;
  readonly outlook: StartOutlook;
  /** The store's change count when the plan was made: the end reuses what the start worked out only when nothing changed since. */
  readonly changesAtStart: number;
  readonly replacedAtStart: [string, string][] | undefined;
  readonly standingsAtStart: Standings | undefined;
  readonly groupsAtStart: Failures | undefined;
  /** Time taken by the question before spending (a person's answer): not counted against --max-wait. */
  readonly askedMs: number;
  /** The run's plan's walk of each of `placed.tasks`, in order, for the engine to admit (RunnerOptions.plan); undefined: the engine walks them. */
  readonly walks: readonly AttemptWalk[] | undefined;
}

/**
 * The run's plan, made once: with --failed's renewals when the run has them (the plan a
 * chosen part is cut from), and the start's totals of what the run will do (a saved plan
 * creates only its ids). Without --failed the same plan gives the supersessions and the
 * standings; with it, those come from the plain plan (renewals are no lockfile fact).
 */
const planOnce = (
  manifest: RunnableManifest & LoadedManifest,
  lock: LockFile,
  selection: RunSelection | undefined,
  reviews: DecisionIndex | undefined,
  walkRules?: DiffOptions["walkRules"],
): PlanResult => {
  const recorded = Object.keys(lock.tasks).length ? lock : undefined;
  return diffPlan(manifest, recorded, { ...(selection?.failed ? { renewFailed: selection.selects } : {}), ...(reviews ? { reviews } : {}), ...(walkRules ? { walkRules } : {}) });
};

const outlookOf = (
  manifest: RunnableManifest,
  plan: PlanResult | undefined,
  freshService: boolean,
  spentBefore: Record<string, string>,
  selection: RunSelection | undefined,
): StartOutlook => {
  const base: StartOutlook = { spentBefore, ...(manifest.budget ? { budget: manifest.budget } : {}) };
  if (!plan || !isLoaded(manifest)) return base;
  // A run of a chosen part counts what it will do: --failed's new attempts are to create
  // (the engine makes them), work it leaves out is not counted; a saved plan creates only its ids.
  const keeps = selection ? (e: PlanEntry) => selection.keeps(e) && ((e.mark !== "+" && e.mark !== "~") || selection.mayCreate?.(e.id) !== false) : undefined;
  const totals = runTotals(plan, freshService, keeps);
  return {
    ...base,
    total: totals.total,
    totals: totals.jobs,
    ...(totals.resume ? { resume: totals.resume } : {}),
    downstream: shapeOf(manifest).downstream,
    startBuckets: startBuckets(plan, freshService, keeps),
  };
};

/**
 * The manifest with the plan's new takes after rejections in review (`retake_rejected`,
 * src/review/retake.ts) among its tasks: the engine admits them as it does the manifest's own.
 */
const withRetakes = (manifest: RunnableManifest, plan: PlanResult | undefined): RunnableManifest =>
  plan?.retakes?.length ? { ...manifest, tasks: [...manifest.tasks, ...plan.retakes] } : manifest;

const retakeIds = (plan: PlanResult | undefined): string => (plan?.retakes ?? []).map((t) => t.id).join(",");

/** The region rule (serviceCheck.ts) with the reach check before anything changes, the foreign lines' warning, and the kept emulator's take-up. */
const serviceStep = (input: PrepareInput) =>
  Effect.gen(function* () {
    const { manifest, emulator, onEvent } = input;
    const store = yield* LockStore;
    const current = emulator ? EMULATOR_SERVICE : serviceIdentity(input.serviceUrl);
    // Nothing at the service yet: an address where nothing answers stops the run before
    // the lockfile records this service or anything changes (reachCheck.ts).
    const reach = emulator
      ? Effect.void
      : Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis;
          yield* reachCheck(yield* OmniClient, current, yield* store.view, manifest.tasks.map((t) => t.id), { signal: input.signal, withinMs: input.maxWaitLeft(now) });
        });
    yield* applyServiceRule(current, manifest.lockfilePath, input.switchService, onEvent, reach);
    // Lines of another manifest (foreignLines.ts): kept as they are, and said with their lines.
    const foreign = foreignLinesWarning(manifest.lockfilePath, manifest.name, store.foreignLines);
    if (foreign) onEvent?.({ type: "notice", level: "warn", message: foreign });
    // The emulated service takes up the tasks it kept at the end of the run before, once
    // this run holds the lockfile (keptEmulator.ts); without them it is a new service.
    const fresh = emulator !== undefined ? takeUpEmulator(emulator, manifest.lockfilePath, yield* store.view, onEvent) : false;
    if (emulator !== undefined) input.onTakeUp();
    return { current, fresh };
  });

/**
 * The plan the engine executes, with the run's own rules: on a fresh service (a new
 * emulator) the records in flight there are planned again first (Recovery.ts
 * `forgetOldService`) and a downloaded attempt is never followed further; with
 * `--recreate-lost` the lost results of downloaded records are counted (through the
 * downloader) and their tasks walk on to a next attempt. Otherwise the run's plan as it is.
 */
const runPlan = (manifest: RunnableManifest & LoadedManifest, plan: PlanResult, fresh: boolean, input: PrepareInput) =>
  Effect.gen(function* () {
    if (!fresh && !input.recreateLost) return plan;
    const store = yield* LockStore;
    if (fresh) yield* forgetOldService({ records: yield* store.view, put: store.put });
    const lost = input.recreateLost ? yield* lostCounts(yield* Downloader, yield* store.view, yield* Clock.currentTimeMillis) : undefined;
    return planOnce(manifest, yield* store.snapshot, input.selection, input.reviews, {
      ...(fresh ? { freshService: true } : {}),
      ...(lost ? { recreateLost: true, lostCount: (id: string) => lost.get(id) ?? 0 } : {}),
    });
  });

export const prepareRun = (input: PrepareInput) =>
  Effect.gen(function* () {
    const { manifest } = input;
    const store = yield* LockStore;
    if (input.expectLockfile !== undefined && lockDigest(yield* store.snapshot) !== input.expectLockfile) {
      return yield* Effect.fail(
        new PlanStale({ message: `the lockfile ${manifest.lockfilePath} changed since the plan was made (another run, or an edit): nothing was sent; make the plan again` }),
      );
    }
    // The lockfile as this run found it, and the plan from it: shown (and asked about) before anything changes.
    let before = yield* store.snapshot;
    let changesAtStart = yield* store.changes;
    let plan = isLoaded(manifest) ? planOnce(manifest, before, input.selection, input.reviews) : undefined;
    const asking = yield* Clock.currentTimeMillis;
    if (input.confirm && plan && isLoaded(manifest)) {
      // What the run will really pay for: results it reuses from other lockfiles cost nothing (reuseResults.ts).
      const service = input.emulator ? EMULATOR_SERVICE : serviceIdentity(input.serviceUrl);
      const shown = input.reuse ? yield* planWithReuse(manifest, before, plan, { emulated: input.emulator !== undefined, service, renewFailed: input.selection?.failed ? input.selection.selects : undefined, reviews: input.reviews, env: input.env, ...(input.reuseAlso ? { also: input.reuseAlso } : {}) }) : plan;
      const go = yield* Effect.tryPromise({ try: async () => input.confirm!(shown, before), catch: (error) => error });
      if (!go) return yield* Effect.fail(new NotConfirmed());
    }
    const askedMs = (yield* Clock.currentTimeMillis) - asking;
    const { current, fresh } = yield* serviceStep(input);
    // Read before the engine starts (no put in between): the store's map, not a copy.
    const recorded = yield* store.view;
    // A changed task must not download over the files of the task it replaces.
    let placed = ownFolders(withRetakes(manifest, plan), recorded);
    // Before anything can be paid for: links out of the outputs folder, unwritable folders.
    yield* startChecks(manifest.outputsDir, linkScope(placed.tasks, recorded), manifest.lockfilePath);
    // Paid results of the same request elsewhere: copied, verified and recorded before the engine starts (reuseResults.ts).
    if (isLoaded(manifest) && input.reuse) {
      yield* reuseResults(manifest, store, {
        emulated: input.emulator !== undefined,
        service: current,
        off: false,
        env: input.env,
        ...(input.outputStore ? { outputStore: input.outputStore } : {}),
        ...(input.reviews ? { reviews: input.reviews } : {}),
        ...(input.selection ? { keeps: input.selection.keeps } : {}),
        ...(input.onEvent ? { onEvent: input.onEvent } : {}),
        ...(input.reuseAlso ? { also: input.reuseAlso } : {}),
      });
    }
    // In CI without a store, results absent at start live only on this runner: said once.
    // (The folder is looked at only then: a local run's start pays no stat per recorded file.)
    if (!input.emulator && !input.storeOutputs && input.env["CI"] === "true") {
      const warning = runnerOnlyWarning(scanResults(Object.fromEntries(yield* store.all), manifest.outputsDir, yield* Clock.currentTimeMillis), { ci: true, store: false });
      if (warning) input.onEvent?.({ type: "notice", level: "warn", message: warning });
    }
    // The service rule or the reuse step changed records (--switch-service abandoned tasks there; reused results recorded): the plan is made again from them.
    if ((yield* store.changes) !== changesAtStart) {
      before = yield* store.snapshot;
      changesAtStart = yield* store.changes;
      if (isLoaded(manifest)) {
        const made = retakeIds(plan);
        plan = planOnce(manifest, before, input.selection, input.reviews);
        if (retakeIds(plan) !== made) placed = ownFolders(withRetakes(manifest, plan), recorded);
      }
    }
    const spentBefore = cashByCurrency(Object.values(before.tasks).map((t) => t.billing), manifest.budget?.currency);
    // Without --failed the run's plan is the plain plan; with it, the plain one is made for what the lockfile records.
    const plain = plan && input.selection?.failed && isLoaded(manifest) ? planOnce(manifest, before, undefined, input.reviews) : plan;
    const recordedAny = Object.keys(before.tasks).length > 0;
    const run = isLoaded(manifest) && plan ? yield* runPlan(manifest, plan, fresh, input) : plan;
    return {
      placed,
      fresh,
      current,
      before,
      outlook: outlookOf(manifest, run, fresh, spentBefore, input.selection),
      walks: run ? walksOf(run, placed.tasks) : undefined,
      changesAtStart,
      replacedAtStart: plain && recordedAny ? supersessions(plain, before) : undefined,
      // As writeReports would work them out (standingsFor) for this lockfile; an empty one has none to tell.
      standingsAtStart: !plannable(manifest) ? undefined : plain && recordedAny ? standings(before, plain) : !recordedAny ? standings(before, NO_PLAN) : undefined,
      // The plan leaves out what earlier failures will not make; this run's failures are taken out at the end.
      groupsAtStart: isLoaded(manifest) ? groupFailures(before, shapeOf(manifest)) : undefined,
      askedMs,
    } satisfies Prepared;
  });
