// The effectful side of the region rule (serviceCheck.ts decides): at a run's start,
// before anything is sent, refuse a run against another service, or mark what a switch
// abandons; then, on a switch back, take up the tasks a run at this service abandoned
// here earlier (followed and downloaded here, never created again) and learn the charges
// of the others abandoned here in flight (asked about once), so spend to date and the
// budget count what this service charged for them.

import { Effect } from "effect";
import { OmniClient } from "../api/OmniClient.js";
import type { RunEvent } from "../engine/RunEvent.js";
import { accountCurrency } from "../money/charges.js";
import { fromImage, fromVideo, type TaskView } from "../protocol/TaskView.js";
import type { LockTask } from "../state/LockFile.js";
import { LockStore } from "../state/LockStore.js";
import { abandonedHere, abandonRecord, checkService, ServiceChanged, takeUpRecord } from "./serviceCheck.js";

const sample = (ids: readonly string[]): string => `${ids.slice(0, 3).join(", ")}${ids.length > 3 ? `, ... (${ids.length - 3} more)` : ""}`;

/** Video ids per query (the service's limit). */
const VIDEO_IDS_PER_QUERY = 50;

/** Abandoned while `submitting`: the lookup by external id pages the image list at most this far back before the record's last change. */
const SUBMITTING_LOOKBACK_MS = 10 * 60_000;

/** What a learnt answer changes in an abandoned record: its end and charge only (history otherwise), and the task id found by its external id. */
const learnt = (rec: LockTask, view: TaskView, now: number): LockTask | undefined => {
  if (view.status !== "succeeded" && view.status !== "failed") return undefined;
  return {
    ...rec,
    ...(rec.task_id === undefined ? { task_id: view.taskId } : {}),
    state: view.status,
    billing: view.billing,
    ...(rec.finished_at === undefined ? { finished_at: view.updatedAt } : {}),
    updated_at: Math.max(rec.updated_at, now),
  };
};

/**
 * The region rule at a run's start (serviceCheck.ts), before anything is sent: refuse
 * (ServiceChanged, exit 2), or mark the tasks a switch abandons, take up those abandoned
 * here before and learn the charges of the others, then record `current` in the header.
 */
export const applyServiceRule = <E, R>(
  current: string,
  lockfile: string,
  switchAllowed: boolean,
  onEvent: ((e: RunEvent) => void) | undefined,
  /** Run after a refusal is ruled out and before anything changes (the run's reach check). */
  beforeChange: Effect.Effect<void, E, R> = Effect.void as Effect.Effect<void, E, R>,
) =>
  Effect.gen(function* () {
    const store = yield* LockStore;
    const decision = checkService({ recorded: store.recordedService, current, records: yield* store.view, switchAllowed, lockfile });
    if (decision._tag === "Refuse") {
      return yield* Effect.fail(new ServiceChanged({ lockfile, recorded: store.recordedService ?? "", current, message: decision.message }));
    }
    yield* beforeChange;
    switch (decision._tag) {
      case "Switch": {
        // Marked, never erased: the engine follows each to its next attempt (a new id) here.
        const now = Date.now();
        for (const id of decision.abandon) {
          const rec = yield* store.get(id);
          if (rec) yield* store.put(id, abandonRecord(rec, decision.from, now));
        }
        onEvent?.({ type: "notice", level: "warn", message: decision.message });
        break;
      }
      case "Record":
        if (decision.note) onEvent?.({ type: "notice", level: "warn", message: decision.note });
        break;
    }
    // Tasks abandoned at this service by an earlier switch: taken up again (never made
    // again), and the charges of the others learnt. Only on a change of service: a rerun
    // at the same one reads no record here.
    if (decision._tag !== "Same") yield* takeUpAbandoned(current, onEvent);
    yield* store.setService(current);
  });

export const takeUpAbandoned = (current: string, onEvent: ((e: RunEvent) => void) | undefined) =>
  Effect.gen(function* () {
    const store = yield* LockStore;
    const here = abandonedHere(yield* store.view, current);
    if (here.takeUp.length === 0 && here.learn.length === 0) return;
    const now = Date.now();
    for (const { resume, replaces } of here.takeUp) {
      const rec = yield* store.get(resume);
      if (rec) yield* store.put(resume, takeUpRecord(rec, now));
      for (const id of replaces) {
        const later = yield* store.get(id);
        if (later) yield* store.put(id, { ...later, superseded_by: resume, updated_at: Math.max(later.updated_at, now) });
      }
    }
    if (here.takeUp.length > 0) {
      const ids = here.takeUp.map((t) => t.resume);
      onEvent?.({
        type: "notice",
        level: "warn",
        message: `${ids.length} task(s) created at ${current} before and abandoned there by a switch are followed here and their results downloaded, not created again (${sample(ids)})`,
      });
    }
    if (here.learn.length === 0) return;
    // Their charges: one question each (videos 50 to a query); an answer that fails or
    // cannot be read leaves the record as it was, for a later run at this service.
    const client = yield* OmniClient;
    const records = new Map<string, LockTask>();
    for (const id of here.learn) {
      const rec = yield* store.get(id);
      if (rec) records.set(id, rec);
    }
    const currency = accountCurrency([...(yield* store.view).values()].map((t) => t.billing));
    // By task id; a record abandoned while `submitting` (no task id) by its external id, the record's key.
    const views = new Map<string, TaskView>();
    const byExternal = new Map<string, TaskView>();
    const known = [...records].filter(([, r]) => r.task_id !== undefined);
    const unknown = [...records].filter(([, r]) => r.task_id === undefined);
    const videos = known.filter(([, r]) => r.kind === "video").map(([, r]) => r.task_id!);
    for (let i = 0; i < videos.length; i += VIDEO_IDS_PER_QUERY) {
      const found = yield* Effect.either(client.queryVideosChecked({ taskIds: videos.slice(i, i + VIDEO_IDS_PER_QUERY) }));
      if (found._tag === "Right") for (const t of found.right.tasks) views.set(t.id, fromVideo(t, false));
    }
    const videoExternal = unknown.filter(([, r]) => r.kind === "video").map(([id]) => id);
    for (let i = 0; i < videoExternal.length; i += VIDEO_IDS_PER_QUERY) {
      const found = yield* Effect.either(client.queryVideosChecked({ externalTaskIds: videoExternal.slice(i, i + VIDEO_IDS_PER_QUERY) }));
      if (found._tag === "Right") for (const t of found.right.tasks) if (t.external_id !== undefined) byExternal.set(t.external_id, fromVideo(t, false));
    }
    for (const [, rec] of known) {
      if (rec.kind !== "image") continue;
      const found = yield* Effect.either(client.getImageChecked(rec.task_id!));
      if (found._tag === "Right") for (const t of found.right.tasks) views.set(t.task_id, fromImage(t, false, currency));
    }
    const imageExternal = unknown.filter(([, r]) => r.kind === "image");
    if (imageExternal.length > 0) {
      const since = Math.min(...imageExternal.map(([, r]) => r.planned_at ?? r.updated_at)) - SUBMITTING_LOOKBACK_MS;
      const found = yield* Effect.either(client.findImagesByExternalIds(imageExternal.map(([id]) => id), { createdAfterMs: since }));
      if (found._tag === "Right") for (const [ext, t] of found.right) byExternal.set(ext, fromImage(t, false, currency));
    }
    const learned: string[] = [];
    for (const [id, rec] of records) {
      const view = rec.task_id !== undefined ? views.get(rec.task_id) : byExternal.get(id);
      const next = view ? learnt(rec, view, now) : undefined;
      if (!next) continue;
      yield* store.put(id, next);
      learned.push(id);
    }
    if (learned.length > 0) {
      onEvent?.({
        type: "notice",
        level: "info",
        message: `${learned.length} task(s) abandoned at ${current} by a switch have ended there; what they were charged counts in spend to date (${sample(learned)})`,
      });
    }
  });
