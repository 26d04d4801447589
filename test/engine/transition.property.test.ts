// The product contract's invariants, checked on the task state machine over random event
// sequences (seeded, reproducible: a failure names its seed). A small simulated service
// answers creates, polls, callbacks and downloads in random orders, including creates
// whose outcome is unknown (sent, no answer, maybe landed), refusals, 1303s and missing
// tasks, and a service whose new tasks stay invisible to lookups for a while (a
// visibility lag shorter than policy.unknownOutcomeWindow). Invariants:
//  1. no second create while an outcome is unknown: a create is sent only with a lookup
//     first once an earlier create of the task may have landed, never at all once the
//     service is known to hold the task, never while a create's outcome is unknown until
//     a lookup that started after the window found nothing, and no task is ever created
//     twice at the (simulated) service, even though it would accept a second one;
//  2. no result recorded that did not come from a service answer: every record of
//     submitted/processing/succeeded/failed names the task id and status a service
//     answer in that same event gave, and `downloaded` only follows a finished download;
//  3. every paid task (one the service holds) ends downloaded, or with a recorded reason
//     (failed/rejected with its error, stuck with a notice, or the run stopped early);
//  4. an intent written ahead is durable before its create skips writing one: a create
//     marked `intentReady` only after a flush reported that task's `submitting` record
//     written, with no other record of it since (flushes answered late, or failing).
// DEBUG_SEED=<n> prints that seed's events and effects.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { makePolicy } from "../../src/policy/Policy.js";
import type { EngineEffect, EngineEvent, KnownRecord } from "../../src/engine/EngineEvent.js";
import type { TaskState } from "../../src/state/LockFile.js";
import { Machine, makeTable, ofTag, seeded, task, view, type Random } from "./machine.js";

const RESULT_STATES: ReadonlySet<TaskState> = new Set(["submitted", "processing", "succeeded", "failed"]);
const policy = makePolicy(1);

interface Remote {
  taskId: string;
  status: "submitted" | "processing" | "succeeded" | "failed";
  /** Lookups by external id see it from this time on (the service's visibility lag). */
  visibleAt: number;
}

const WINDOW = 60_000; // policy.unknownOutcomeWindow at scale 1

const simulate = (seed: number): { violations: string[]; steps: number; seen: Record<string, number> } => {
  const r: Random = seeded(seed);
  const violations: string[] = [];
  const lostLockfile = r.chance(0.15);
  const callbacks = r.chance(0.5);
  const m = new Machine(makeTable({ lookupFirst: lostLockfile, callbacks, concurrency: 1 + r.int(3) }, policy));
  const service = new Map<string, Remote>(); // by external id
  const unknown = new Set<string>(); // a create may have landed, unseen
  const unknownAt = new Map<string, number>(); // outcome unknown since (a send with no settling answer)
  const known = new Set<string>(); // the machine was told the service holds it
  const pendingCreates = new Map<string, Extract<EngineEffect, { _tag: "Create" }>>();
  const pendingDownloads: string[] = [];
  // Intents written ahead: flushes not yet answered, and the ids whose `submitting` record is durable.
  const pendingFlushes: string[][] = [];
  const durable = new Set<string>();
  const notices: string[] = [];
  let now = 1_000;
  let serial = 0;
  let steps = 0;
  const seen: Record<string, number> = {};
  const count = (what: string) => (seen[what] = (seen[what] ?? 0) + 1);
  const newRemote = (status: Remote["status"] = "submitted", lag = 0): Remote => ({ taskId: `svc-${++serial}`, status, visibleAt: now + lag });
  const visible = (id: string, at: number) => {
    const s = service.get(id);
    return s !== undefined && at >= s.visibleAt ? s : undefined;
  };

  /** What the event itself says the service answered, by external id. */
  const reported = (event: EngineEvent): Map<string, Remote> => {
    const out = new Map<string, Remote>();
    switch (event._tag) {
      case "Created":
        out.set(event.id, { taskId: event.taskId, status: "submitted", visibleAt: 0 });
        break;
      case "Adopted":
        out.set(event.id, { taskId: event.view.taskId, status: event.view.status, visibleAt: 0 });
        break;
      case "LookedUp":
        for (const [id, v] of event.found) out.set(id, { taskId: v.taskId, status: v.status, visibleAt: 0 });
        break;
      case "Polled":
        for (const v of event.views) {
          const a = event.asked.find((x) => x.taskId === v.taskId);
          if (a) out.set(a.id, { taskId: v.taskId, status: v.status, visibleAt: 0 });
        }
        for (const [id, v] of event.lookedUp?.found ?? []) out.set(id, { taskId: v.taskId, status: v.status, visibleAt: 0 });
        break;
      // A callback is no service answer: nothing it says may be recorded (issue 9, item 2).
      case "Callback":
        break;
    }
    return out;
  };

  const feed = (event: EngineEvent): void => {
    steps++;
    count(event._tag);
    const effects = m.feed(event);
    const said = reported(event);
    if (event._tag === "Callback") {
      for (const e of effects) if (e._tag !== "Poll" && e._tag !== "Emit") violations.push(`Callback: led to ${e._tag} (a callback is only a cue to query)`);
    }
    for (const e of effects) {
      switch (e._tag) {
        case "Record": {
          const state = e.patch.state;
          if (RESULT_STATES.has(state)) {
            const answers = [said.get(e.task.id), said.get(`${e.task.id}#early`)].filter((x) => x !== undefined);
            const matches = answers.some((a) => a.status === state && (e.patch.task_id === undefined || e.patch.task_id === a.taskId));
            if (!matches) violations.push(`${event._tag}: recorded ${e.task.id} ${state} (${e.patch.task_id}) without a service answer saying so`);
          }
          if (state === "downloaded" && !(event._tag === "Fetched" && event.id === e.task.id)) violations.push(`${event._tag}: recorded ${e.task.id} downloaded without a download`);
          // Any newer record (a quiet intent too) is not durable until a flush says so.
          durable.delete(e.task.id);
          break;
        }
        case "FlushIntents":
          count("FlushIntents");
          pendingFlushes.push([...e.ids]);
          break;
        case "Create": {
          const id = e.entry.task.id;
          if (known.has(id)) violations.push(`create sent for ${id}, which the service is known to hold`);
          else if (unknown.has(id) && !e.lookupFirst) violations.push(`create sent for ${id} without a lookup while an earlier create's outcome is unknown`);
          else if (unknown.has(id)) count("create after unknown outcome, looked up");
          if (unknownAt.has(id)) violations.push(`create sent for ${id} while its outcome is unknown (since ${unknownAt.get(id)}), before a lookup past the window found nothing`);
          if (e.entry.borrowedFrom !== undefined) count("create on a slot a cue lent");
          if (e.intentReady) {
            count("create with its intent written ahead");
            if (!durable.has(id) || m.records.get(id)?.state !== "submitting") violations.push(`create for ${id} skips its intent write, but no durable intent was reported`);
          }
          pendingCreates.set(id, e);
          break;
        }
        case "Poll": {
          if (r.chance(0.05)) {
            feed({ _tag: "PollFailed", now, kind: e.kind, message: "reset", refused: r.chance(0.1) });
            break;
          }
          const views = e.tasks.flatMap((a) => {
            const remote = [...service.entries()].find(([, s]) => s.taskId === a.taskId);
            if (!remote || r.chance(0.1)) return [];
            const [id, s] = remote;
            advance(s);
            return [view(s.taskId, id, s.status, now)];
          });
          let lookedUp: Extract<EngineEvent, { _tag: "Polled" }>["lookedUp"];
          if ((e.lookups ?? []).length > 0) {
            const found = new Map(
              e.lookups.flatMap(({ id }) => {
                const s = visible(id, now);
                return s ? [[id, view(s.taskId, id, s.status, now)] as const] : [];
              }),
            );
            for (const { id } of e.lookups) {
              if (found.has(id)) {
                known.add(id);
                unknown.delete(id);
                unknownAt.delete(id);
                count("unknown outcome adopted by a poll's lookup");
              } else if (unknownAt.has(id) && e.at >= unknownAt.get(id)! + WINDOW) {
                // A lookup past the window found nothing: settled as "not there".
                unknown.delete(id);
                unknownAt.delete(id);
                count("unknown outcome settled as not there");
              }
            }
            lookedUp = { ids: e.lookups.map((l) => l.id), found, startedAt: e.at };
          }
          feed({ _tag: "Polled", now, asked: e.tasks, views, ...(lookedUp ? { lookedUp } : {}) });
          break;
        }
        case "Download":
          pendingDownloads.push(e.entry.task.id);
          break;
        case "Retry": {
          count("Retry");
          const rec = m.records.get(e.task.id);
          const k: KnownRecord | undefined = rec ? { state: rec.state, ...(rec.task_id ? { task_id: rec.task_id } : {}) } : undefined;
          feed({ _tag: "AdmitRetry", now, task: e.task, firstAttempt: e.firstAttempt, ...(k ? { known: k } : {}) });
          break;
        }
        case "Emit":
          if (e.event.type === "notice") notices.push(e.event.message);
          break;
      }
    }
  };

  const advance = (s: Remote) => {
    if (s.status === "submitted" && r.chance(0.6)) s.status = "processing";
    else if (s.status === "processing" && r.chance(0.5)) s.status = r.chance(0.15) ? "failed" : "succeeded";
  };

  const answerCreate = (id: string, benign: boolean) => {
    const order = pendingCreates.get(id)!;
    pendingCreates.delete(id);
    const existing = visible(id, now);
    if (order.lookupFirst && existing) {
      known.add(id);
      unknown.delete(id);
      return feed({ _tag: "Adopted", now, id, view: view(existing.taskId, id, existing.status, now), intentRecorded: false });
    }
    m.intent(id, now);
    // The create leaves: a service that accepts reused ids would make a second task.
    if (service.has(id)) violations.push(`${id} created twice at the service`);
    const roll = benign ? 0 : r.int(9);
    switch (roll) {
      case 0: {
        const s = newRemote();
        service.set(id, s);
        known.add(id);
        unknown.delete(id);
        return feed({ _tag: "Created", now, id, taskId: s.taskId, createdAt: now });
      }
      case 1:
        unknown.delete(id);
        return feed({ _tag: "NoSlot", now, id });
      case 2:
        unknown.delete(id);
        return feed({ _tag: "Rejected", now, id, code: 1201, message: "bad request", intentRecorded: true });
      case 3: {
        // The worker sent, got no answer, looked up and found it: adopted.
        const s = newRemote();
        service.set(id, s);
        known.add(id);
        unknown.delete(id);
        return feed({ _tag: "Adopted", now, id, view: view(s.taskId, id, s.status, now), intentRecorded: true });
      }
      case 4: {
        // Sent, no answer (5xx after the body, a reset): it may have landed, invisible for a while.
        if (r.chance(0.5)) service.set(id, newRemote("submitted", r.int(WINDOW - 10_000)));
        unknown.add(id);
        unknownAt.set(id, now);
        count("Unknown");
        return feed({ _tag: "Unknown", now, id, message: "HTTP 502", sentAt: now, exists: false, intentRecorded: true });
      }
      case 7: {
        // 1201 "id in use": another run made it (it exists, maybe not visible yet).
        service.set(id, newRemote("submitted", r.int(WINDOW)));
        unknown.add(id);
        unknownAt.set(id, now);
        count("Unknown exists");
        return feed({ _tag: "Unknown", now, id, message: `external_task_id ${id} already used`, sentAt: now, exists: true, intentRecorded: true });
      }
      case 8: {
        // The lookup before the send failed: nothing was sent.
        unknown.delete(id);
        return feed({ _tag: "SendFailed", now, id, message: "lookup failed", lookupFirst: true, intentRecorded: true });
      }
      case 5:
        unknown.delete(id);
        return feed({ _tag: "SendFailed", now, id, message: "5xx after retries", lookupFirst: false, intentRecorded: true });
      default: {
        const keep = r.chance(0.5);
        if (keep) {
          if (r.chance(0.5)) service.set(id, newRemote());
          unknown.add(id);
        } else unknown.delete(id);
        return feed({ _tag: "Refused", now, id, message: "balance", keepSubmitting: keep, intentRecorded: true });
      }
    }
  };

  /** The oldest flush of intents written ahead completes (or fails, and nothing of it is durable). */
  const answerFlush = (benign: boolean) => {
    const ids = pendingFlushes.shift()!;
    const ok = benign || r.chance(0.8);
    if (ok) for (const id of ids) if (m.records.get(id)?.state === "submitting") durable.add(id);
    feed({ _tag: "IntentsWritten", now, ids, ok });
  };

  const answerDownload = (benign: boolean) => {
    const id = pendingDownloads.shift()!;
    if (!benign && r.chance(0.3)) return feed({ _tag: "FetchFailed", now, id, message: "truncated" });
    feed({ _tag: "Fetched", now, id, outputs: [{ type: "video", index: 0, variant: "main", path: `${id}/0.mp4`, sha256: "x" } as never], urls: [] });
  };

  // ---- start: a lockfile left in any state by an earlier run
  const n = 1 + r.int(5);
  for (let i = 0; i < n; i++) {
    const t = task(`t${i}`, r.chance(0.7) ? "video" : "image", 1, r.int(2));
    const state = lostLockfile ? undefined : r.pick([undefined, "planned", "submitting", "submitted", "processing", "succeeded", "downloaded", "failed"] as const);
    let k: KnownRecord | undefined;
    if (lostLockfile) {
      if (r.chance(0.4)) {
        service.set(t.id, newRemote(r.pick(["submitted", "processing", "succeeded"] as const)));
        unknown.add(t.id);
      }
    } else if (state === "submitting") {
      const sentAt = now - r.int(2 * WINDOW);
      if (r.chance(0.5)) service.set(t.id, { ...newRemote(), visibleAt: sentAt + r.int(WINDOW - 10_000) });
      unknown.add(t.id);
      unknownAt.set(t.id, sentAt);
      k = { state, submitted_at: sentAt };
    } else if (state === "submitted" || state === "processing" || state === "succeeded" || state === "downloaded") {
      const s = newRemote(state === "succeeded" || state === "downloaded" ? "succeeded" : state);
      service.set(t.id, s);
      known.add(t.id);
      k = { state, task_id: s.taskId, created_at: 0 };
    } else if (state === "failed") {
      k = { state };
      m.records.set(t.id, { state, error: { message: "earlier failure", at: 0 } } as never);
    } else if (state === "planned") k = { state };
    if (k && state !== "failed") m.records.set(t.id, { ...k, outputs: [], billing: [] } as never);
    feed({ _tag: "Admit", now, task: t, firstAttempt: 1, front: false, ...(k ? { known: k } : {}), ...(state === "downloaded" ? { filesOk: r.chance(0.5) } : {}) });
  }
  // Recovery: one batched lookup per kind of the tasks whose outcome is unknown.
  for (const kind of ["video", "image"] as const) {
    const unsure = [...m.table.entries.values()].filter((e) => e.lookupFirst && e.phase === "waiting" && e.task.kind === kind).map((e) => e.task.id);
    if (unsure.length === 0) continue;
    if (r.chance(0.1)) {
      feed({ _tag: "LookupFailed", now, kind, message: "reset", refused: false });
      continue;
    }
    const found = new Map(unsure.flatMap((id) => (service.has(id) ? [[id, view(service.get(id)!.taskId, id, service.get(id)!.status, now)] as const] : [])));
    // The lookup settles each outcome: found (the service holds it) or not there (nothing landed).
    for (const id of unsure) unknown.delete(id);
    for (const id of found.keys()) known.add(id);
    feed({ _tag: "LookedUp", now, ids: unsure, found });
  }

  // ---- random phase
  for (let i = 0; i < 80 && m.table.loop._tag !== "Stop"; i++) {
    const roll = r.int(10);
    if (roll < 3 || (pendingCreates.size === 0 && pendingDownloads.length === 0)) {
      now += r.int(15_000);
      feed({ _tag: "Tick", now });
    } else if (roll < 6 && pendingCreates.size > 0) answerCreate(r.pick([...pendingCreates.keys()]), false);
    else if (roll < 8 && pendingDownloads.length > 0) answerDownload(false);
    else if (roll < 8 && pendingFlushes.length > 0) answerFlush(false);
    else if (roll === 8 && callbacks) {
      const video = [...service.entries()].filter(([id]) => m.table.entries.get(id)?.task.kind === "video");
      if (video.length > 0) {
        const [id, s] = r.pick(video);
        advance(s);
        // Half of them lie (forged): a state the service does not hold.
        const status = r.chance(0.5) ? s.status : r.pick(["submitted", "processing", "succeeded", "failed"] as const);
        feed({ _tag: "Callback", now, observation: { kind: "video", taskId: s.taskId, externalId: id, status } });
      }
    } else if (roll === 9 && r.chance(0.05)) feed({ _tag: "Stop", now, reason: "signal" });
  }

  // ---- drain: the service behaves from here on, until the run is quiet or stops
  for (let round = 0; round < 400 && m.table.loop._tag === "Wait"; round++) {
    while (pendingFlushes.length > 0) answerFlush(true);
    for (const id of [...pendingCreates.keys()]) answerCreate(id, true);
    while (pendingDownloads.length > 0) answerDownload(true);
    for (const s of service.values()) if (s.status !== "failed") s.status = "succeeded";
    now += 20_000;
    feed({ _tag: "Tick", now });
  }
  if (m.table.loop._tag === "Wait") violations.push(`the run did not settle: ${JSON.stringify([...m.table.entries.values()].map((e) => [e.task.id, e.phase]))}`);

  for (const e of m.table.entries.values()) if (e.phase === "stuck") count("stuck");
  // ---- invariant 3
  for (const id of service.keys()) {
    const rec = m.records.get(id);
    const entry = m.table.entries.get(id);
    const ok =
      rec?.state === "downloaded" ||
      ((rec?.state === "failed" || rec?.state === "rejected") && rec.error !== undefined) ||
      (entry?.phase === "stuck" && notices.some((msg) => msg.includes(id))) ||
      m.table.stop !== undefined;
    if (!ok) violations.push(`paid task ${id} ended ${rec?.state ?? "unrecorded"} (phase ${entry?.phase ?? "gone"}) with no recorded reason`);
  }
  if (process.env.DEBUG_SEED === String(seed)) for (const st of m.log) console.log(JSON.stringify(st.event, (k, v) => (k === "entry" || k === "task" && v?.request ? v?.id ?? v?.task?.id : v instanceof Map ? [...v] : v)), "=>", st.effects.map((e) => e._tag + (e._tag === "Create" ? `(${e.entry.task.id},lf=${e.lookupFirst})` : e._tag === "Record" ? `(${e.task.id},${e.patch.state})` : "")).join(" "));
  return { violations, steps, seen };
};

test("over 1,500 random event sequences: no second create while an outcome is unknown, no result without a service answer, every paid task downloaded or explained, no create skipping an intent that is not durable", () => {
  let events = 0;
  for (let seed = 1; seed <= 1500; seed++) {
    const { violations, steps } = simulate(seed);
    events += steps;
    if (violations.length > 0) assert.unreachable(`seed ${seed}: ${violations.slice(0, 3).join("; ")}`);
  }
  assert.ok(events > 50_000, `the sequences exercised the machine (${events} events)`);
});

test("the sequences reach the risky cases: creates looked up after unknown outcomes, adoptions, refusals, 1303s, retries, stuck tasks", () => {
  const total: Record<string, number> = {};
  for (let seed = 1; seed <= 300; seed++) for (const [k, v] of Object.entries(simulate(seed).seen)) total[k] = (total[k] ?? 0) + v;
  for (const k of ["FlushIntents", "create with its intent written ahead", "create on a slot a cue lent", "create after unknown outcome, looked up", "Unknown", "Unknown exists", "unknown outcome adopted by a poll's lookup", "unknown outcome settled as not there", "Adopted", "Refused", "NoSlot", "Retry", "stuck", "Fetched", "FetchFailed", "Callback", "LookedUp"]) {
    assert.ok((total[k] ?? 0) > 0, `${k} happened (${JSON.stringify(total)})`);
  }
});

test.run();
