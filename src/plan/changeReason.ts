// Why a changed task (`~` in plan) is a new task, in words (issue 31): the manifest's
// name, the job's id, the take, a field of the request, or an input's content. A task's
// id is `<name>-<job>-<hash>` and its hash covers the exact request (inputs by content),
// the take and the attempt (src/manifest/TaskIdentity.ts), so the lockfile's record of the
// task replaced says most of it: its id, job, take, attempt and request hash. The request
// fields that differ come from the request the reports recorded (src/report/requestChanges.ts),
// when one was. Pure.

import type { LockTask } from "../state/LockFile.js";

/** Characters of the hash at the end of a task id (TaskIdentity.ts `shortHash`). */
const HASH_CHARS = 20;

/** The manifest's name part of a task id of `job`, or undefined when the id is not `<name>-<job>-<hash>`. */
export const namePartOf = (id: string, job: string): string | undefined => {
  const tail = `-${job}-`;
  const at = id.length - HASH_CHARS - tail.length;
  return at > 0 && id.slice(at, id.length - HASH_CHARS) === tail ? id.slice(0, at) : undefined;
};

/** The hash part of a task id (its last 20 characters). */
const hashPartOf = (id: string): string => id.slice(-HASH_CHARS);

export interface ChangedTask {
  readonly id: string;
  readonly job: string;
  readonly take: number;
  readonly attempt: number;
  readonly requestHash: string;
  readonly upstream?: { readonly job: string; readonly task: string; readonly output: number };
}

export interface ChangeFacts {
  /** The task to create. */
  readonly task: ChangedTask;
  /** The task it replaces: its id and lockfile record. */
  readonly before: { readonly id: string; readonly record: Pick<LockTask, "job" | "take" | "attempt" | "request_hash" | "upstream"> };
  /**
   * What differs between the recorded request of the task replaced and this one's, field by
   * field (requestChanges); undefined when that request was never recorded (no report).
   */
  readonly fields: readonly string[] | undefined;
  /** This task's request hash at another attempt (the manifest's `withAttempt`), to compare with a record of a later attempt. */
  readonly hashAt?: (attempt: number) => string;
}

/**
 * What changed, one line each: the id's parts that differ (the manifest's name, the job's
 * id), the take, then either that the request is the same, or the request's fields that
 * differ, or the upstream result it is made from, or that something not recorded changed.
 * Never empty.
 */
export const changeReason = (f: ChangeFacts): string[] => {
  const { task, before, fields } = f;
  const old = before.record;
  const out: string[] = [];
  const oldName = namePartOf(before.id, old.job);
  const newName = namePartOf(task.id, task.job);
  if (oldName !== undefined && newName !== undefined && oldName !== newName) out.push(`the manifest's name changed: ${oldName} → ${newName} (a task's id is made from it)`);
  if (old.job !== task.job) out.push(`the job's id changed: ${old.job} → ${task.job}`);
  if (old.take !== task.take) out.push(`the take changed: ${old.take} → ${task.take}`);
  const hashThen = old.attempt === task.attempt ? task.requestHash : f.hashAt?.(old.attempt);
  if (hashThen !== undefined && hashThen === old.request_hash) {
    // Paths of inputs may differ (an upstream result in another folder): not part of the request.
    out.push("the request is the same (prompt, settings, inputs by content): only the task's id changed");
    return out;
  }
  if (fields !== undefined && fields.length > 0) return [...out, ...fields];
  const up = old.upstream;
  const upNow = task.upstream;
  if (up !== undefined && upNow !== undefined && (hashPartOf(up.task) !== hashPartOf(upNow.task) || up.output !== upNow.output)) {
    out.push(`made from another ${upNow.job} result: ${up.task}#${up.output} → ${upNow.task}#${upNow.output}`);
    return out;
  }
  if (fields === undefined) {
    out.push(`what${out.length > 0 ? " else" : ""} changed is not known: no report recorded the request of ${before.id}; 'omnibatch report' keeps it from now on`);
  } else if (old.take === task.take) {
    out.push("prompt, settings and inputs as shown are the same: something the report does not show changed (the video model, or the content of an input recorded without its sha256)");
  }
  return out;
};
