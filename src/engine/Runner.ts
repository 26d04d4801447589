// The run itself: one controller fiber owns every task's in-memory state and decides what
// happens next (submit, poll, download, expand downstream, stop); creates and downloads
// run in worker fibers that report back through a queue. Every step is written to the
// LockStore before it matters: a create's intent is flushed before it is sent, so a kill
// at any point leaves a lockfile from which the next run resumes without paying twice.

import { BigDecimal, Duration, Effect, FiberSet, Option, Queue } from "effect";
import type { ApiError } from "../api/ApiError.js";
import { classify } from "../api/classify.js";
import type { OmniClientService } from "../api/OmniClient.js";
import { withRetry } from "../api/retry.js";
import type { BillingEntry, ImageCreateRequest, VideoCreateRequest } from "../api/wire.js";
import type { PlannedTask, UpstreamItem } from "../manifest/PlannedTask.js";
import type { DownloaderService } from "../outputs/Downloader.js";
import type { LockOutput, LockTask, TaskState } from "../state/LockFile.js";
import type { LockfileWriteError } from "../state/LockfileError.js";
import type { LockStoreService } from "../state/LockStore.js";
import { chargedIn, formatMoney, isExhausted, spending, wouldExceed } from "./Budget.js";
import { findImagesByExternalId, findImagesById, findVideosByExternalId, findVideosById } from "./Lookup.js";
import type { Policy, ProductKind } from "../policy/Policy.js";
import type { JobCounts, RunEvent, RunOutcome, RunSummary } from "./RunEvent.js";
import type { RunnableManifest } from "./RunnableManifest.js";
import { SlotLimiter } from "./SlotLimiter.js";
import type { CallbackFeed, CallbackObservation } from "./CallbackListener.js";
import { CallbackWatch } from "./CallbackWatch.js";
import { fromImage, fromVideo, isContentRisk, type RemoteOutput, type TaskView } from "../protocol/TaskView.js";

export interface RunnerDeps {
  readonly client: OmniClientService;
  readonly store: LockStoreService;
  readonly downloader: DownloaderService;
  readonly policy: Policy;
}

export interface RunnerOptions {
  readonly manifest: RunnableManifest;
  /** Overrides the manifest's concurrency. */
  readonly concurrency?: number;
  /** Stop submitting and waiting after this long (exit 3). */
  readonly maxWaitMs?: number;
  /** Aborting it stops the run at once (exit 3), as SIGINT does. */
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: RunEvent) => void;
  /**
   * The service is new and knows none of the lockfile's tasks (an in-process emulator,
   * started afresh by every `--emulate` run). Tasks not finished locally are planned
   * again from scratch, with no lookups: nothing real was ever paid for them.
   */
  readonly freshService?: boolean;
  /** Callbacks: its address goes on every create, its observations are handled like poll answers. */
  readonly callbacks?: CallbackFeed;
}

/** What the run did, before reports are written (RunSummary minus reports). */
export type RunnerResult = Omit<RunSummary, "reports">;

type Phase = "waiting" | "creating" | "inflight" | "fetching" | "done" | "failed" | "rejected" | "stuck";

interface Entry {
  task: PlannedTask;
  /** The attempt the chain started from: retries used = task.attempt - firstAttempt. */
  readonly firstAttempt: number;
  /** Place in line for submitting (see `inLine`); fixed for the entry's life. */
  readonly seq: number;
  /** Change only through setPhase, which keeps the phase indexes right. */
  phase: Phase;
  taskId?: string;
  /** When it was sent (or adopted): its age drives the polling rhythm. */
  sentAt: number;
  createdAt?: number;
  /** Must be looked up by external_task_id before any create. */
  lookupFirst: boolean;
  /** Not to be sent before this time (after a 1303 or a failed send). */
  notBefore: number;
  /** Slots held at the service, by our count. */
  holding: number;
  /** Failed download rounds. */
  fetchRounds: number;
  /** Creates that ended without an answer to act on. */
  sendFailures: number;
  /** Polls in a row whose answer did not include the task. */
  missingPolls: number;
}

type Msg =
  | { readonly _tag: "Created"; readonly id: string; readonly taskId: string; readonly createdAt: number }
  | { readonly _tag: "Adopted"; readonly id: string; readonly view: TaskView }
  | { readonly _tag: "NoSlot"; readonly id: string }
  | { readonly _tag: "Rejected"; readonly id: string; readonly code?: number; readonly message: string }
  | {
      readonly _tag: "Refused";
      readonly id: string;
      readonly code?: number;
      readonly message: string;
      /** An earlier send of this create may have made the task: keep it `submitting` (looked up first next time). */
      readonly keepSubmitting: boolean;
    }
  | { readonly _tag: "SendFailed"; readonly id: string; readonly message: string; readonly lookupFirst: boolean }
  | { readonly _tag: "Fetched"; readonly id: string; readonly outputs: readonly LockOutput[]; readonly urls: readonly RemoteOutput[] }
  | { readonly _tag: "FetchFailed"; readonly id: string; readonly message: string }
  | { readonly _tag: "Stop"; readonly reason: "time" | "signal" }
  | { readonly _tag: "Callback"; readonly observation: CallbackObservation };

/** States a new service has nothing to add to: the files are here, or the task ended. */
const FINISHED_LOCALLY: ReadonlySet<TaskState> = new Set(["downloaded", "failed", "rejected"]);

const errorText = (e: ApiError): string => e.message;
const errorCode = (e: ApiError): number | undefined => (e._tag === "ServiceError" ? e.code : undefined);

/** A 1201 about the external id: the task exists already; adopt it instead of failing. */
const isDuplicateId = (e: ApiError, id: string): boolean =>
  e._tag === "ServiceError" &&
  e.code === 1201 &&
  (e.message.includes(id) || (/external/i.test(e.message) && /exist|duplicate|already|unique|used/i.test(e.message)));

const watermarkOf = (task: PlannedTask | undefined): boolean =>
  task?.kind === "video"
    ? task.request.options?.watermark_info?.enabled === true
    : task?.request?.watermark_info?.enabled === true;

/** The body actually sent: the callback address is not part of the request (nor its hash or id). */
const withCallbackUrl = (request: VideoCreateRequest, url: string | undefined): VideoCreateRequest =>
  url === undefined ? request : { ...request, options: { ...request.options, callback_url: url } };

const withImageCallbackUrl = (request: ImageCreateRequest, url: string | undefined): ImageCreateRequest =>
  url === undefined ? request : { ...request, callback_url: url };

export const runEngine = (deps: RunnerDeps, options: RunnerOptions): Effect.Effect<RunnerResult, LockfileWriteError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const { client, store, downloader, policy } = deps;
      const manifest = options.manifest;
      const started = Date.now();
      const emit = (event: RunEvent) => options.onEvent?.(event);
      const concurrency = Math.max(1, options.concurrency ?? manifest.concurrency);
      // Image tasks report cash charges without a currency: they are in the account's
      // currency, which the budget or prices name, or which video charges show.
      let currency: string | undefined = manifest.budget?.currency ?? manifest.prices?.currency;
      const jobById = new Map(manifest.jobs.map((j) => [j.id, j] as const));
      // Asked once per finished task: computed once per job.
      const downstreamByJob = new Map(manifest.jobs.map((u) => [u.id, manifest.jobs.filter((j) => j.upstream?.job === u.id)] as const));
      const downstreamOf = (job: string) => downstreamByJob.get(job) ?? [];

      const limiters: Record<ProductKind, SlotLimiter> = {
        video: new SlotLimiter(concurrency, policy.slotDecrease, policy.slotIncreaseAfter),
        image: new SlotLimiter(concurrency, policy.slotDecrease, policy.slotIncreaseAfter),
      };

      const inbox = yield* Queue.unbounded<Msg>();
      const watch = options.callbacks ? new CallbackWatch(policy) : undefined;
      const callbackUrl = options.callbacks?.url;
      if (options.callbacks) {
        const unsubscribe = options.callbacks.subscribe((observation) => Queue.unsafeOffer(inbox, { _tag: "Callback", observation }));
        yield* Effect.addFinalizer(() => Effect.sync(unsubscribe));
      }
      const workers = yield* FiberSet.make<void, never>();
      const entries = new Map<string, Entry>();
      // The line tasks are submitted in: downstream and retried tasks first (the newest
      // of them first), then the manifest's tasks in order. A place is kept for the
      // entry's life (one that goes back to waiting keeps it); seq < 0 indexes
      // `lineFront` (-1 is its first element), seq >= 0 indexes `lineBack`. Both only grow.
      const lineFront: Entry[] = [];
      const lineBack: Entry[] = [];
      const inLine = (seq: number): Entry | undefined => (seq < 0 ? lineFront[-seq - 1] : lineBack[seq]);
      const takePlace = (front: boolean): number => (front ? -(lineFront.length + 1) : lineBack.length);
      const enterLine = (entry: Entry) => {
        if (entry.seq < 0) lineFront[-entry.seq - 1] = entry;
        else lineBack[entry.seq] = entry;
      };
      // Indexes over the phases, kept by setPhase, so the loop's questions (anything
      // busy? anything waiting? who is in flight?) cost nothing per task: with 20,000
      // tasks, scanning every entry on every message made a run quadratic.
      /** No waiting entry sits before this place in line. */
      let firstWaiting = 0;
      const waitingCount: Record<ProductKind, number> = { video: 0, image: 0 };
      /** Entries creating, in flight or fetching. */
      let activeCount = 0;
      const inflightOf: Record<ProductKind, Set<Entry>> = { video: new Set(), image: new Set() };
      const creatingNow = new Set<Entry>();
      const enterPhase = (entry: Entry) => {
        const kind = entry.task.kind;
        switch (entry.phase) {
          case "waiting":
            waitingCount[kind]++;
            if (entry.seq < firstWaiting) firstWaiting = entry.seq;
            return;
          case "inflight":
            inflightOf[kind].add(entry);
            activeCount++;
            return;
          case "creating":
            creatingNow.add(entry);
            activeCount++;
            return;
          case "fetching":
            activeCount++;
            return;
        }
      };
      const leavePhase = (entry: Entry) => {
        const kind = entry.task.kind;
        switch (entry.phase) {
          case "waiting":
            waitingCount[kind]--;
            return;
          case "inflight":
            inflightOf[kind].delete(entry);
            activeCount--;
            return;
          case "creating":
            creatingNow.delete(entry);
            activeCount--;
            return;
          case "fetching":
            activeCount--;
            return;
        }
      };
      const setPhase = (entry: Entry, phase: Phase) => {
        if (entry.phase === phase) return;
        leavePhase(entry);
        entry.phase = phase;
        enterPhase(entry);
      };
      /** Fresh result URLs of finished tasks, for downstream requests. */
      const upstreamUrls = new Map<string, { at: number; outputs: readonly RemoteOutput[] }>();
      const lock = new Map<string, LockTask>(yield* store.all);
      if (options.freshService) {
        // The old service is gone with its tasks: waiting on them would leave them stuck.
        // Finished work (downloaded, failed, rejected) stays as the record of that run.
        const now = Date.now();
        for (const [id, rec] of lock) {
          if (FINISHED_LOCALLY.has(rec.state) || (rec.state === "planned" && rec.task_id === undefined)) continue;
          const reset: LockTask = {
            job: rec.job,
            kind: rec.kind,
            vars: rec.vars,
            dir: rec.dir,
            request_hash: rec.request_hash,
            take: rec.take,
            attempt: rec.attempt,
            state: "planned",
            planned_at: now,
            updated_at: now,
            outputs: [],
            billing: [],
            ...(rec.upstream ? { upstream: rec.upstream } : {}),
          };
          lock.set(id, reset);
          yield* store.put(id, reset);
        }
      }
      if (currency === undefined) {
        for (const t of lock.values()) currency ??= t.billing.find((b) => b.currency !== undefined)?.currency;
      }
      // A fresh service cannot hold tasks this lockfile lost: no lookups before creating.
      const lostLockfile = lock.size === 0 && manifest.tasks.length > 0 && options.freshService !== true;

      let stopReason: "time" | "signal" | "refused" | undefined;
      let refusal: string | undefined;
      let budgetStopped = false;
      let creating = 0;
      let created = 0;
      let adopted = 0;
      let downloaded = 0;
      let noSlotAnswers = 0;
      const lastPoll: Record<ProductKind, number> = { video: 0, image: 0 };
      // Cash charged in the budget's currency over every record, kept as a running sum
      // once first asked for (summing all records per submitted task was quadratic).
      const budgetCurrency = manifest.budget?.currency ?? "";
      const zero = BigDecimal.fromBigInt(0n);
      const chargedById = new Map<string, BigDecimal.BigDecimal>();
      let chargedSum: BigDecimal.BigDecimal | undefined;

      // ------------------------------------------------------------ lockfile writes

      const write = (id: string, task: LockTask) =>
        Effect.suspend(() => {
          if (chargedSum !== undefined && lock.get(id)?.billing !== task.billing) {
            const now = chargedIn(task.billing, budgetCurrency);
            chargedSum = BigDecimal.sum(BigDecimal.subtract(chargedSum, chargedById.get(id) ?? zero), now);
            chargedById.set(id, now);
          }
          lock.set(id, task);
          return store.put(id, task);
        });

      const baseRecord = (task: PlannedTask, state: TaskState, now: number): LockTask => ({
        job: task.job,
        kind: task.kind,
        vars: task.vars,
        dir: task.dir,
        request_hash: task.requestHash,
        take: task.take,
        attempt: task.attempt,
        state,
        planned_at: now,
        updated_at: now,
        outputs: [],
        billing: [],
        ...(task.upstream ? { upstream: task.upstream } : {}),
      });

      const record = (task: PlannedTask, patch: Partial<LockTask> & { state: TaskState }) =>
        Effect.suspend(() => {
          const now = Date.now();
          const current = lock.get(task.id) ?? baseRecord(task, "planned", now);
          const next: LockTask = { ...current, ...patch, updated_at: now };
          const changed = current.state !== next.state;
          return write(task.id, next).pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                if (changed) {
                  emit({
                    type: "task",
                    id: task.id,
                    job: task.job,
                    state: next.state,
                    ...(next.task_id ? { task_id: next.task_id } : {}),
                    ...(next.error ? { error: { ...(next.error.code !== undefined ? { code: next.error.code } : {}), message: next.error.message } } : {}),
                    ...(next.state === "downloaded" ? { files: next.outputs.filter((o) => o.path).length } : {}),
                    ...((next.state === "succeeded" || next.state === "failed") && next.billing.length > 0 ? { billing: next.billing } : {}),
                  });
                }
              }),
            ),
          );
        });

      // ------------------------------------------------------------ planning

      /** Adds a task (following its retry chain through the lockfile) in the phase the lockfile says. */
      const admit = (planned: PlannedTask, front: boolean): Effect.Effect<void> =>
        Effect.gen(function* () {
          let task = planned;
          const firstAttempt = planned.attempt;
          // Walk the attempts already made: a failed attempt with retries left leads to the next.
          for (;;) {
            const rec = lock.get(task.id);
            if (rec?.state !== "failed") break;
            if (!retryAllowed(task, firstAttempt, rec.error?.code, rec.error?.message ?? "")) break;
            task = manifest.withAttempt(task, task.attempt + 1);
          }
          if (entries.has(task.id)) return;
          const rec = lock.get(task.id);
          const entry: Entry = {
            task,
            firstAttempt,
            seq: takePlace(front),
            phase: "waiting",
            sentAt: Date.now(),
            lookupFirst: lostLockfile,
            notBefore: 0,
            holding: 0,
            fetchRounds: 0,
            sendFailures: 0,
            missingPolls: 0,
            ...(rec?.task_id ? { taskId: rec.task_id } : {}),
            ...(rec?.created_at !== undefined ? { createdAt: rec.created_at } : {}),
          };
          entries.set(task.id, entry);
          enterLine(entry);
          enterPhase(entry);
          switch (rec?.state) {
            case undefined:
              yield* record(task, { state: "planned", planned_at: Date.now() });
              break;
            case "planned":
              break;
            case "submitting":
              entry.lookupFirst = true;
              break;
            case "submitted":
            case "processing":
              if (entry.taskId === undefined) {
                entry.lookupFirst = true;
              } else {
                setPhase(entry, "inflight");
                entry.holding = task.slots;
                limiters[task.kind].take(task.slots);
              }
              break;
            case "succeeded":
              // Finished but not (all) downloaded: a query gives fresh links.
              setPhase(entry, entry.taskId === undefined ? "waiting" : "inflight");
              if (entry.taskId === undefined) entry.lookupFirst = true;
              break;
            case "downloaded": {
              const ok = yield* downloader.verify(rec.outputs);
              if (ok) {
                setPhase(entry, "done");
                yield* expandFrom(entry);
              } else if (entry.taskId !== undefined && options.freshService !== true) {
                setPhase(entry, "inflight"); // files missing or changed: fetch again
                emit({ type: "notice", level: "warn", message: `${task.id}: files missing or changed on disk, downloading again` });
              } else if (options.freshService === true) {
                // A fresh service no longer has the task: make it again.
                setPhase(entry, "waiting");
                delete entry.taskId;
                delete entry.createdAt;
                emit({ type: "notice", level: "warn", message: `${task.id}: files missing or changed on disk, creating it again on the emulator` });
              } else {
                setPhase(entry, "waiting");
                entry.lookupFirst = true;
              }
              break;
            }
            case "failed":
              setPhase(entry, "failed");
              break;
            case "rejected":
              setPhase(entry, "rejected");
              break;
          }
        });

      const retryAllowed = (task: PlannedTask, firstAttempt: number, code: number | undefined, message: string): boolean => {
        const retryFailed = jobById.get(task.job)?.retryFailed ?? task.retryFailed;
        if (task.attempt - firstAttempt >= retryFailed) return false;
        return !isContentRisk(code, message) || task.retryContentRisk;
      };

      /** Downstream tasks of a task whose outputs are on disk. */
      const expandFrom = (entry: Entry): Effect.Effect<void> =>
        downstreamOf(entry.task.job).length === 0
          ? Effect.void
          : Effect.gen(function* () {
              const jobs = downstreamOf(entry.task.job);
              const items = upstreamItems(entry);
              if (items.length === 0) return;
              for (const job of jobs) {
                let tasks: PlannedTask[];
                try {
                  tasks = manifest.expandDownstream(job.id, items);
                } catch (error) {
                  emit({ type: "notice", level: "warn", message: `${job.id}: cannot expand from ${entry.task.id}: ${(error as Error).message}` });
                  continue;
                }
                for (const t of tasks) yield* admit(t, true);
              }
            });

      const upstreamItems = (entry: Entry): UpstreamItem[] => {
        const rec = lock.get(entry.task.id);
        if (!rec) return [];
        const urls = upstreamUrls.get(entry.task.id)?.outputs ?? [];
        return rec.outputs
          .filter((o) => o.variant === "main" && (o.type === "image" || o.type === "video") && o.path && o.sha256)
          .map((o) => ({
            job: entry.task.job,
            task: entry.task.id,
            index: o.index,
            type: o.type as "image" | "video",
            // Without a known link (a result from an earlier run) the id is still right, since
            // identity uses the content hash; the link is refreshed before any create uses it.
            url:
              urls.find((u) => u.type === o.type && u.index === o.index && u.variant === "main")?.url ??
              `https://omnibatch.invalid/stale/${o.sha256}`,
            file: downloader.absolutePath(o.path!),
            sha256: o.sha256!,
            vars: entry.task.vars,
          }));
      };

      // ------------------------------------------------------------ talking to the service

      const viewsByExternalId = (kind: ProductKind, ids: readonly string[]): Effect.Effect<Map<string, TaskView>, ApiError> =>
        kind === "video"
          ? Effect.map(findVideosByExternalId(client, policy, ids), (m) => {
              const out = new Map<string, TaskView>();
              for (const [id, t] of m) out.set(id, fromVideo(t, watermarkOf(entries.get(id)?.task)));
              return out;
            })
          : Effect.map(findImagesByExternalId(client, policy, ids), (m) => {
              const out = new Map<string, TaskView>();
              for (const [id, t] of m) out.set(id, fromImage(t, watermarkOf(entries.get(id)?.task), currency));
              return out;
            });

      /** The current view of one task by its system id (fresh links). */
      const viewById = (kind: ProductKind, taskId: string, watermark: boolean): Effect.Effect<TaskView | undefined, ApiError> =>
        kind === "video"
          ? Effect.map(findVideosById(client, policy, [taskId]), (m) => {
              const t = m.get(taskId);
              return t ? fromVideo(t, watermark) : undefined;
            })
          : Effect.map(findImagesById(client, policy, [{ taskId, createdAt: undefined }]), (m) => {
              const t = m.get(taskId);
              return t ? fromImage(t, watermark, currency) : undefined;
            });

      /** A downstream request carries an upstream result URL; send it only while fresh. */
      const freshRequest = (task: PlannedTask): Effect.Effect<PlannedTask, ApiError | string> =>
        Effect.gen(function* () {
          if (!task.upstream) return task;
          const up = entries.get(task.upstream.task);
          const known = upstreamUrls.get(task.upstream.task);
          if (known && Date.now() - known.at < Duration.toMillis(policy.urlFreshFor)) return task;
          if (!up?.taskId) return yield* Effect.fail(`its upstream task ${task.upstream.task} is not known at the service`);
          const view = yield* viewById(up.task.kind, up.taskId, false);
          if (!view || view.status !== "succeeded") {
            return yield* Effect.fail(`its upstream task ${task.upstream.task} has no results at the service any more`);
          }
          upstreamUrls.set(up.task.id, { at: Date.now(), outputs: view.outputs });
          const again = manifest.expandDownstream(task.job, upstreamItems(up)).find((t) => t.id === task.id);
          if (!again) return yield* Effect.fail(`its upstream outputs changed since it was planned`);
          return again.attempt === task.attempt ? again : manifest.withAttempt(again, task.attempt);
        });

      const sendCreate = (task: PlannedTask) =>
        task.kind === "video"
          ? Effect.map(withRetry(client.createVideo(withCallbackUrl(task.request as VideoCreateRequest, callbackUrl)), policy.requestRetry), (d) => ({
              taskId: d.id,
              createdAt: d.create_time,
            }))
          : Effect.map(withRetry(client.createImage(withImageCallbackUrl(task.request as ImageCreateRequest, callbackUrl)), policy.requestRetry), (d) => ({
              taskId: d.task_id,
              createdAt: d.created_at,
            }));

      /** Looks one task up by external id, a few times apart (a create may take a moment to show). */
      const lookupOne = (task: PlannedTask, patient: boolean): Effect.Effect<TaskView | undefined, ApiError> => {
        const once = Effect.map(viewsByExternalId(task.kind, [task.id]), (m) => m.get(task.id));
        if (!patient) return once;
        return once.pipe(
          Effect.flatMap((v) => (v === undefined ? Effect.fail("absent" as const) : Effect.succeed(v))),
          Effect.retry(policy.lookupBeforeRecreate),
          Effect.catchIf(
            (e): e is "absent" => e === "absent",
            () => Effect.succeed(undefined),
          ),
        );
      };

      /** The create worker: lookup when unsure, record the intent durably, send, classify. */
      const createWorker = (entry: Entry): Effect.Effect<Msg> =>
        Effect.gen(function* () {
          let task = entry.task;
          const id = task.id;
          if (entry.lookupFirst) {
            const found = yield* lookupOne(task, false);
            if (found) return { _tag: "Adopted", id, view: found } as const;
          }
          const fresh = yield* Effect.either(freshRequest(task));
          if (fresh._tag === "Left") {
            const why = typeof fresh.left === "string" ? fresh.left : errorText(fresh.left);
            return { _tag: "Rejected", id, message: `not sent: ${why}` } as const;
          }
          task = fresh.right;
          // The intent is durable before the request leaves: a kill after this point is
          // resolved by a lookup, never by a second create.
          yield* record(task, { state: "submitting", submitted_at: Date.now() });
          yield* store.flush;
          let linkRefreshes = 0;
          for (let sends = 0; sends < 4; sends++) {
            if (sends > 0 || linkRefreshes > 0) {
              // Time has passed (retries, lookups) or a link was refused: refresh when stale.
              const again = yield* Effect.either(freshRequest(task));
              if (again._tag === "Right") task = again.right;
            }
            const result = yield* Effect.either(sendCreate(task));
            if (result._tag === "Right") return { _tag: "Created", id, ...result.right } as const;
            const error = result.left;
            const kind = classify(error);
            if (kind === "no-slot") return { _tag: "NoSlot", id } as const;
            if (kind === "refused") {
              return { _tag: "Refused", id, code: errorCode(error), message: errorText(error), keepSubmitting: sends > 0 } as const;
            }
            if (kind === "task-rejected") {
              // The real service's words for a reused external id are undocumented (seen
              // as 1201): any 1201 gets a lookup, so a task another job created is adopted,
              // not marked rejected. Only a message naming the id is worth waiting for.
              if (errorCode(error) === 1201) {
                const found = yield* lookupOne(task, isDuplicateId(error, id));
                if (found) return { _tag: "Adopted", id, view: found } as const;
              }
              // A downstream request whose upstream link expired on the way: nothing was
              // created (1xxx), so fresh links and one more send are safe.
              if (task.upstream && /fetch|403|expired|download|aborted/i.test(error.message)) {
                if (linkRefreshes < 3) {
                  linkRefreshes++;
                  upstreamUrls.delete(task.upstream.task);
                  sends--; // not a send whose outcome was in doubt
                  continue;
                }
                if (entry.sendFailures < 5) {
                  return { _tag: "SendFailed", id, message: errorText(error), lookupFirst: false } as const;
                }
              }
              return { _tag: "Rejected", id, code: errorCode(error), message: errorText(error) } as const;
            }
            if (kind === "retry") {
              // The retry schedule ran out on an answer that proves nothing was created.
              return { _tag: "SendFailed", id, message: errorText(error), lookupFirst: false } as const;
            }
            // Unknown outcome: the task may exist. Find it before sending again.
            const found = yield* lookupOne(task, true);
            if (found) return { _tag: "Adopted", id, view: found } as const;
          }
          return { _tag: "SendFailed", id, message: "the service did not confirm the create after several tries", lookupFirst: true } as const;
        }).pipe(
          Effect.catchAll((error: ApiError | LockfileWriteError) => {
            if (error._tag === "LockfileWriteError") {
              // The intent could not be made durable, so nothing was sent; try later, and
              // after repeated failures leave it for the next run (exit 3).
              return Effect.succeed<Msg>({ _tag: "SendFailed", id: entry.task.id, message: error.message, lookupFirst: true });
            }
            const kind = classify(error);
            if (kind === "refused") {
              // Refused during a lookup: whether the task exists is still unknown.
              return Effect.succeed<Msg>({ _tag: "Refused", id: entry.task.id, code: errorCode(error), message: errorText(error), keepSubmitting: true });
            }
            return Effect.succeed<Msg>({ _tag: "SendFailed", id: entry.task.id, message: errorText(error), lookupFirst: true });
          }),
        );

      const downloadWorker = (entry: Entry, view: TaskView): Effect.Effect<Msg> => {
        const rec = lock.get(entry.task.id);
        const refresh = Effect.flatMap(viewById(entry.task.kind, view.taskId, watermarkOf(entry.task)), (v) =>
          Effect.succeed(v?.outputs ?? []),
        );
        return downloader.fetchAll({ dir: entry.task.dir, outputs: view.outputs, previous: rec?.outputs ?? [], refresh }).pipe(
          Effect.map((r): Msg => ({ _tag: "Fetched", id: entry.task.id, outputs: r.outputs, urls: r.urls })),
          Effect.catchAll((e) => Effect.succeed<Msg>({ _tag: "FetchFailed", id: entry.task.id, message: e.message })),
        );
      };

      const fork = (worker: Effect.Effect<Msg>) =>
        FiberSet.run(workers, Effect.flatMap(worker, (m) => Queue.offer(inbox, m)).pipe(Effect.asVoid));

      // Downloads run a few at a time (the transfers are the limit anyway); the rest of the
      // finished tasks wait here in the order they finished. A waiting worker fiber per
      // finished task (thousands when many tasks end at once) cost memory and scheduling.
      const maxFetches = Math.max(1, policy.downloadConcurrency * 2);
      let fetchesRunning = 0;
      const fetchQueue: ({ readonly entry: Entry; readonly view: TaskView } | undefined)[] = [];
      let fetchHead = 0;
      const startFetches = Effect.suspend(() => {
        const starts: Effect.Effect<unknown>[] = [];
        while (fetchesRunning < maxFetches && fetchHead < fetchQueue.length) {
          const next = fetchQueue[fetchHead]!;
          fetchQueue[fetchHead++] = undefined;
          if (next.entry.phase !== "fetching" || entries.get(next.entry.task.id) !== next.entry) continue;
          fetchesRunning++;
          starts.push(fork(downloadWorker(next.entry, next.view)));
        }
        if (fetchHead > 1024 && fetchHead * 2 > fetchQueue.length) {
          fetchQueue.splice(0, fetchHead);
          fetchHead = 0;
        }
        return Effect.all(starts, { discard: true });
      });
      const queueFetch = (entry: Entry, view: TaskView) =>
        Effect.suspend(() => {
          fetchQueue.push({ entry, view });
          return startFetches;
        });

      // ------------------------------------------------------------ applying what the service says

      const release = (entry: Entry) => {
        if (entry.holding > 0) limiters[entry.task.kind].release(entry.holding);
        entry.holding = 0;
      };

      const apply = (entry: Entry, view: TaskView): Effect.Effect<void> =>
        Effect.gen(function* () {
          const task = entry.task;
          entry.taskId = view.taskId;
          entry.createdAt = view.createdAt;
          const base = { task_id: view.taskId, created_at: view.createdAt };
          if (view.status === "submitted" || view.status === "processing") {
            if (entry.phase !== "inflight") {
              setPhase(entry, "inflight");
              if (entry.holding === 0) {
                entry.holding = task.slots;
                limiters[task.kind].take(task.slots);
              }
            }
            const prev = lock.get(task.id);
            if (prev?.state !== view.status || prev.task_id !== view.taskId) yield* record(task, { state: view.status, ...base });
            return;
          }
          if (entry.holding > 0) limiters[task.kind].onFinished();
          release(entry);
          currency ??= view.billing.find((b) => b.currency !== undefined)?.currency;
          if (view.status === "succeeded") {
            const prev = lock.get(task.id);
            if (prev?.state !== "succeeded") {
              yield* record(task, { state: "succeeded", ...base, finished_at: view.updatedAt, billing: view.billing as BillingEntry[] });
            }
            upstreamUrls.set(task.id, { at: Date.now(), outputs: view.outputs });
            setPhase(entry, "fetching");
            yield* queueFetch(entry, view);
            return;
          }
          // failed: keep the service's reason; maybe try again as a new attempt
          const code = /\b(1[0-9]{3}|5[0-9]{3})\b/.exec(view.message)?.[1];
          const error = { ...(code ? { code: Number(code) } : {}), message: view.message || "failed (no reason given)", at: Date.now() };
          yield* record(task, { state: "failed", ...base, finished_at: view.updatedAt, billing: view.billing as BillingEntry[], error });
          setPhase(entry, "failed");
          if (retryAllowed(task, entry.firstAttempt, error.code, error.message)) {
            const next = manifest.withAttempt(task, task.attempt + 1);
            entries.delete(task.id); // failed: in no phase index, and its place in line is passed over
            emit({ type: "notice", level: "info", message: `${task.id} failed (${error.message}); trying again as ${next.id}` });
            yield* admitRetry(next, entry.firstAttempt);
          }
        });

      const admitRetry = (task: PlannedTask, firstAttempt: number) =>
        Effect.gen(function* () {
          const entry: Entry = {
            task,
            firstAttempt,
            seq: takePlace(true),
            phase: "waiting",
            sentAt: Date.now(),
            lookupFirst: lostLockfile,
            notBefore: 0,
            holding: 0,
            fetchRounds: 0,
            sendFailures: 0,
            missingPolls: 0,
          };
          entries.set(task.id, entry);
          enterLine(entry);
          enterPhase(entry);
          if (!lock.has(task.id)) yield* record(task, { state: "planned", planned_at: Date.now() });
        });

      const handle = (msg: Msg): Effect.Effect<void> =>
        Effect.gen(function* () {
          if (msg._tag === "Callback") return yield* onCallback(msg.observation);
          if (msg._tag === "Stop") {
            if (!stopReason) {
              stopReason = msg.reason;
              emit({
                type: "notice",
                level: "warn",
                message: msg.reason === "time" ? "time limit reached: stopping, tasks in flight continue at the service" : "interrupted: stopping",
              });
            }
            return;
          }
          if (msg._tag === "Fetched" || msg._tag === "FetchFailed") {
            fetchesRunning--;
            yield* startFetches;
          }
          const entry = entries.get(msg.id);
          if (!entry) return;
          const task = entry.task;
          switch (msg._tag) {
            case "Created":
              creating--;
              created++;
              setPhase(entry, "inflight");
              entry.taskId = msg.taskId;
              entry.createdAt = msg.createdAt;
              entry.sentAt = Date.now();
              entry.lookupFirst = false;
              yield* record(task, { state: "submitted", task_id: msg.taskId, created_at: msg.createdAt });
              if (watch) {
                const early = watch.takeEarly(task.id);
                if (early) yield* onCallback(early);
              }
              return;
            case "Adopted":
              creating--;
              adopted++;
              entry.lookupFirst = false;
              entry.sentAt = Date.now();
              emit({ type: "notice", level: "info", message: `${task.id}: found at the service (${msg.view.taskId}), not created again` });
              yield* apply(entry, msg.view);
              return;
            case "NoSlot": {
              creating--;
              noSlotAnswers++;
              const limiter = limiters[task.kind];
              const before = limiter.limit;
              release(entry);
              limiter.onNoSlot(limiter.used);
              setPhase(entry, "waiting");
              entry.lookupFirst = false; // 1303: nothing was created
              entry.notBefore = Date.now() + Duration.toMillis(policy.noSlotWait);
              yield* record(task, { state: "planned" });
              if (limiter.limit < before) {
                emit({ type: "notice", level: "info", message: `${task.kind} slots: the service is full at ${limiter.used + task.slots}; using ${limiter.limit}` });
              }
              return;
            }
            case "Rejected":
              creating--;
              release(entry);
              setPhase(entry, "rejected");
              yield* record(task, { state: "rejected", error: { ...(msg.code !== undefined ? { code: msg.code } : {}), message: msg.message, at: Date.now() } });
              return;
            case "Refused":
              creating--;
              release(entry);
              setPhase(entry, "waiting");
              // This answer created nothing (a 1xxx code); unless an earlier send or a lookup
              // left the outcome in doubt, the next run sends it again without a lookup.
              if (msg.keepSubmitting) entry.lookupFirst = true;
              else if (lock.get(task.id)?.state === "submitting") yield* record(task, { state: "planned" });
              if (!stopReason) {
                stopReason = "refused";
                refusal = msg.message;
                emit({ type: "notice", level: "warn", message: `the account refused: ${msg.message}. Nothing more is submitted.` });
              }
              return;
            case "SendFailed":
              creating--;
              entry.sendFailures++;
              release(entry);
              setPhase(entry, entry.sendFailures >= 8 ? "stuck" : "waiting");
              entry.lookupFirst = msg.lookupFirst;
              entry.notBefore = Date.now() + Duration.toMillis(policy.noSlotWait) * 5;
              emit({ type: "notice", level: "warn", message: `${task.id}: create not confirmed (${msg.message}); will try again` });
              return;
            case "Fetched": {
              downloaded += msg.outputs.filter((o) => o.path).length;
              upstreamUrls.set(task.id, { at: Date.now(), outputs: msg.urls });
              yield* record(task, { state: "downloaded", outputs: msg.outputs as LockOutput[] });
              setPhase(entry, "done");
              yield* expandFrom(entry);
              return;
            }
            case "FetchFailed":
              entry.fetchRounds++;
              emit({ type: "notice", level: "warn", message: `${task.id}: download failed: ${msg.message}` });
              if (entry.fetchRounds >= 3) {
                setPhase(entry, "stuck");
              } else {
                setPhase(entry, "inflight"); // the next poll brings fresh links and tries again
              }
              return;
          }
        });

      // ------------------------------------------------------------ following

      const poll = (kind: ProductKind): Effect.Effect<void> =>
        Effect.gen(function* () {
          const flying = [...inflightOf[kind]].filter((e) => e.taskId);
          lastPoll[kind] = Date.now();
          if (flying.length === 0) return;
          const byTaskId = new Map(flying.map((e) => [e.taskId!, e] as const));
          const result =
            kind === "video"
              ? yield* Effect.either(
                  Effect.map(findVideosById(client, policy, [...byTaskId.keys()]), (m) =>
                    [...m.values()].map((t) => fromVideo(t, watermarkOf(byTaskId.get(t.id)!.task))),
                  ),
                )
              : yield* Effect.either(
                  Effect.map(
                    findImagesById(
                      client,
                      policy,
                      flying.map((e) => ({ taskId: e.taskId!, createdAt: e.createdAt })),
                    ),
                    (m) => [...m.values()].map((t) => fromImage(t, watermarkOf(byTaskId.get(t.task_id)!.task), currency)),
                  ),
                );
          if (result._tag === "Left") {
            const error = result.left;
            if (classify(error) === "refused" && !stopReason) {
              stopReason = "refused";
              refusal = errorText(error);
              emit({ type: "notice", level: "warn", message: `the account refused: ${refusal}` });
            } else {
              emit({ type: "notice", level: "warn", message: `following ${kind} tasks: ${errorText(error)}; asking again later` });
            }
            return;
          }
          const seen = new Set<string>();
          for (const view of result.right) {
            const entry = byTaskId.get(view.taskId);
            seen.add(view.taskId);
            if (entry && entry.phase === "inflight") {
              entry.missingPolls = 0;
              yield* apply(entry, view);
            }
          }
          // Missing means "not visible yet"; missing for very long means the service does
          // not know the task (deleted, another account, a restarted emulator). Leave it
          // for a later run rather than wait forever; never create it again.
          for (const entry of flying) {
            if (seen.has(entry.taskId!)) continue;
            entry.missingPolls++;
            if (entry.missingPolls >= 5 && Date.now() - entry.sentAt > Duration.toMillis(policy.missingAfter)) {
              release(entry);
              setPhase(entry, "stuck");
              emit({
                type: "notice",
                level: "warn",
                message: `${entry.task.id}: task ${entry.taskId} is not visible at the service; left as it is for a later run (not created again)`,
              });
            }
          }
        });

      const flyingTasks = (kind: ProductKind) => {
        const now = Date.now();
        return [...inflightOf[kind]].map((e) => ({ taskId: e.taskId, ageMs: now - e.sentAt }));
      };

      /**
       * A callback is a poll answer for one task, and goes the same way (apply). It may
       * come before the create's answer: kept until then. Stale or foreign ones are dropped.
       */
      const onCallback = (observation: CallbackObservation): Effect.Effect<void> =>
        Effect.gen(function* () {
          const externalId = observation.kind === "video" ? observation.task.external_id : observation.task.task_info?.external_task_id;
          const entry = externalId === undefined ? undefined : entries.get(externalId);
          if (!entry || !watch || entry.task.kind !== observation.kind) return;
          if (entry.phase === "creating") return watch.stash(entry.task.id, observation);
          const view =
            observation.kind === "video"
              ? fromVideo(observation.task, watermarkOf(entry.task))
              : fromImage(observation.task, watermarkOf(entry.task), currency);
          if (entry.phase !== "inflight" || entry.taskId !== view.taskId) return;
          watch.noteHeard(observation.kind, view.taskId, view.status, view.createdAt, view.updatedAt);
          // Deliveries may overtake each other or a poll: never step back to "submitted".
          if (view.status === "submitted" && lock.get(entry.task.id)?.state === "processing") return;
          entry.missingPolls = 0;
          yield* apply(entry, view);
        });

      const pollDueAt = (kind: ProductKind): number | undefined => {
        if (inflightOf[kind].size === 0) return undefined;
        let newest = Number.NEGATIVE_INFINITY;
        for (const e of inflightOf[kind]) newest = Math.max(newest, e.sentAt);
        const youngest = Date.now() - newest;
        const normal = policy.pollInterval(kind, youngest);
        return lastPoll[kind] + Duration.toMillis(watch ? watch.pollInterval(kind, normal, flyingTasks(kind)) : normal);
      };

      // ------------------------------------------------------------ submitting

      // Holding slots: creating, or in flight as far as we know; bounded by the concurrency.
      const inFlightEstimates = () => {
        const out: PlannedTask["estimate"][] = [];
        for (const e of inflightOf.video) if (e.holding > 0) out.push(e.task.estimate);
        for (const e of inflightOf.image) if (e.holding > 0) out.push(e.task.estimate);
        for (const e of creatingNow) out.push(e.task.estimate);
        return out;
      };

      const spent = () => {
        if (chargedSum === undefined) {
          chargedSum = zero;
          for (const [id, t] of lock) {
            const c = chargedIn(t.billing, budgetCurrency);
            chargedById.set(id, c);
            chargedSum = BigDecimal.sum(chargedSum, c);
          }
        }
        return { charged: chargedSum, inFlight: spending([], inFlightEstimates(), budgetCurrency).inFlight };
      };

      /** Starts every task that fits now; returns the earliest time a waiting task may become sendable. */
      const submit = (): Effect.Effect<number | undefined> =>
        Effect.gen(function* () {
          let wakeAt: number | undefined;
          if (stopReason || budgetStopped) return undefined;
          const now = Date.now();
          // A kind can start something only with a task waiting and a slot free; when
          // neither can, nothing is scanned: the message or poll that frees a slot brings
          // the loop back here.
          const open = (kind: ProductKind) => waitingCount[kind] > 0 && limiters[kind].fits(1);
          if (!open("video") && !open("image")) return undefined;
          const waiting = waitingCount.video + waitingCount.image;
          let seen = 0;
          let leading = true;
          for (let seq = firstWaiting; seq < lineBack.length && seen < waiting; seq++) {
            if (creating >= policy.createConcurrency) break;
            const entry = inLine(seq);
            if (!entry || entry.phase !== "waiting") {
              // Nothing waits before this place now; an entry back to waiting moves it back.
              if (leading) firstWaiting = seq + 1;
              continue;
            }
            leading = false;
            seen++;
            if (entry.notBefore > now) {
              wakeAt = Math.min(wakeAt ?? Infinity, entry.notBefore);
              continue;
            }
            const limiter = limiters[entry.task.kind];
            if (!limiter.fits(entry.task.slots)) continue;
            if (manifest.budget && !entry.lookupFirst) {
              const s = spent();
              const over = entry.task.estimate ? wouldExceed(manifest.budget, s, entry.task.estimate) : isExhausted(manifest.budget, s);
              if (over) {
                budgetStopped = true;
                emit({
                  type: "notice",
                  level: "warn",
                  message: `budget: ${formatMoney(s.charged)} ${manifest.budget.currency} charged and ${formatMoney(s.inFlight)} in flight; the next task would pass ${manifest.budget.max}. Nothing more is submitted.`,
                });
                return undefined;
              }
            }
            limiter.take(entry.task.slots);
            entry.holding = entry.task.slots;
            setPhase(entry, "creating");
            creating++;
            yield* fork(createWorker(entry));
          }
          return wakeAt;
        });

      // ------------------------------------------------------------ start-up

      emit({
        type: "start",
        manifest: manifest.file,
        name: manifest.name,
        lockfile: manifest.lockfilePath,
        outputs: manifest.outputsDir,
        tasks: manifest.tasks.length,
        jobs: manifest.jobs.map((j) => j.id),
        concurrency,
      });

      for (const t of manifest.tasks) yield* admit(t, false);

      // Every task whose create may have landed is looked up in batches now, rather than
      // one by one before its create: with a lost lockfile, that is all of them.
      for (const kind of ["video", "image"] as const) {
        const unsure = [...entries.values()].filter((e) => e.lookupFirst && e.phase === "waiting" && e.task.kind === kind);
        if (unsure.length === 0) continue;
        const found = yield* Effect.either(viewsByExternalId(kind, unsure.map((e) => e.task.id)));
        if (found._tag === "Left") {
          emit({ type: "notice", level: "warn", message: `looking up ${kind} tasks: ${errorText(found.left)}; each is looked up again before its create` });
          if (classify(found.left) === "refused") {
            stopReason = "refused";
            refusal = errorText(found.left);
          }
          continue;
        }
        for (const e of unsure) {
          const view = found.right.get(e.task.id);
          e.lookupFirst = false;
          if (view) {
            adopted++;
            e.sentAt = Date.now();
            yield* apply(e, view);
          } else if (lock.get(e.task.id)?.state === "submitting") {
            yield* record(e.task, { state: "planned" });
          }
        }
      }
      if (lostLockfile && adopted > 0) {
        emit({ type: "notice", level: "info", message: `no lockfile: found ${adopted} task(s) already at the service; they are followed, not created again` });
      }
      yield* store.flush;

      // ------------------------------------------------------------ the loop

      const deadline = options.maxWaitMs !== undefined ? started + options.maxWaitMs : undefined;
      const onAbort = () => Queue.unsafeOffer(inbox, { _tag: "Stop", reason: "signal" });
      if (options.signal?.aborted) onAbort();
      options.signal?.addEventListener("abort", onAbort, { once: true });
      yield* Effect.addFinalizer(() => Effect.sync(() => options.signal?.removeEventListener("abort", onAbort)));

      const busy = () => activeCount > 0;
      const anyWaiting = () => waitingCount.video + waitingCount.image > 0;

      for (;;) {
        // Take in everything the workers said, without waiting.
        for (;;) {
          const msg = yield* Queue.poll(inbox);
          if (Option.isNone(msg)) break;
          yield* handle(msg.value);
        }
        if (deadline !== undefined && Date.now() >= deadline && !stopReason) yield* handle({ _tag: "Stop", reason: "time" });
        if (stopReason) break;
        const wakeForWaiting = yield* submit();
        if (!busy() && (!anyWaiting() || budgetStopped)) break;

        const now = Date.now();
        let next = wakeForWaiting ?? Infinity;
        for (const kind of ["video", "image"] as const) {
          const due = pollDueAt(kind);
          if (due === undefined) continue;
          if (due <= now) {
            yield* poll(kind);
            next = Math.min(next, now);
          } else next = Math.min(next, due);
        }
        if (deadline !== undefined) next = Math.min(next, deadline);
        const waitMs = Math.max(0, Math.min(next, now + 60_000) - Date.now());
        if (next <= Date.now()) continue;
        const msg = yield* Queue.take(inbox).pipe(Effect.timeoutOption(Duration.millis(waitMs)));
        if (Option.isSome(msg)) yield* handle(msg.value);
      }

      // ------------------------------------------------------------ stopping

      // Workers still running are interrupted: a create cut off stays `submitting` and is
      // looked up by the next run; a download cut off leaves only a temp file.
      yield* FiberSet.clear(workers);
      yield* store.flush;

      const counts: Record<string, { total: number; done: number; inFlight: number; queued: number; failed: number; rejected: number }> = {};
      for (const j of manifest.jobs) counts[j.id] = { total: 0, done: 0, inFlight: 0, queued: 0, failed: 0, rejected: 0 };
      const failures: RunSummary["failures"][number][] = [];
      let pending = 0;
      for (const e of entries.values()) {
        const c = (counts[e.task.job] ??= { total: 0, done: 0, inFlight: 0, queued: 0, failed: 0, rejected: 0 });
        c.total++;
        const rec = lock.get(e.task.id);
        switch (e.phase) {
          case "done":
            c.done++;
            break;
          case "failed":
          case "rejected":
            if (e.phase === "failed") c.failed++;
            else c.rejected++;
            failures.push({
              id: e.task.id,
              job: e.task.job,
              state: e.phase,
              ...(rec?.error?.code !== undefined ? { code: rec.error.code } : {}),
              message: rec?.error?.message ?? "",
            });
            break;
          case "waiting":
            c.queued++;
            pending++;
            break;
          default:
            c.inFlight++;
            pending++;
        }
      }
      const spend: Record<string, string> = {};
      const currencies = new Set<string>();
      for (const t of lock.values()) for (const b of t.billing) if (b.charge_type === "cash" && b.currency) currencies.add(b.currency);
      if (currency) currencies.add(currency);
      for (const c of currencies) spend[c] = formatMoney(chargedIn([...lock.values()].flatMap((t) => t.billing), c));

      let outcome: RunOutcome;
      let reason: string | undefined;
      if (stopReason === "refused") {
        outcome = "refused";
        reason = `the account refused: ${refusal}`;
      } else if (budgetStopped && pending > 0) {
        outcome = "budget";
        reason = `budget ${manifest.budget?.max} ${manifest.budget?.currency} reached`;
      } else if (pending > 0) {
        outcome = "pending";
        reason =
          stopReason === "time" ? "time limit reached" : stopReason === "signal" ? "interrupted" : "some results could not be downloaded yet";
      } else if (failures.length > 0) {
        outcome = "failed";
      } else {
        outcome = "done";
      }
      const exitCode = ({ done: 0, failed: 1, pending: 3, budget: 4, refused: 5 } as const)[outcome];
      const jobs: Record<string, JobCounts> = counts;
      return {
        exitCode,
        outcome,
        ...(reason ? { reason } : {}),
        manifest: manifest.file,
        lockfile: manifest.lockfilePath,
        outputs: manifest.outputsDir,
        jobs,
        spend,
        created,
        adopted,
        downloaded,
        failures,
        elapsedMs: Date.now() - started,
        noSlotAnswers,
      } satisfies RunnerResult;
    }),
  );
