// Turns one HTTP answer (status, Retry-After, body text) into the operation's data or a
// typed error. Pure: the envelope code decides success or failure; a success must match
// the operation's schema; anything unreadable becomes a DecodeError that says why.
// Lenient where the real service varies (null for an absent field, no request_id,
// numbers where decimal strings are documented), and, in interpretTaskAnswer, per task:
// one unreadable task is an anomaly beside the good ones, not a failure of the answer.
// Every string handed on has passed `scrub` (the key removed, control characters inert).

import { Either } from "effect";
import { DecodeError, ServiceError, type ApiError, type Operation } from "./ApiError.js";
import type { AnswerSchemas, TaskShape } from "./AnswerSchemas.js";
import { cleanStrings } from "./neutralise.js";
import { impossibleCharge } from "../money/chargeCheck.js";

export interface RawAnswer {
  readonly httpStatus: number;
  /** The Retry-After header as sent, if any. */
  readonly retryAfter?: string | null;
  /** A request id from the headers, used when the body has none. */
  readonly headerRequestId?: string | null;
  readonly body: string;
}

/** Retry-After (delta seconds or an HTTP date) in ms from `nowMs`; undefined when absent or unreadable. */
export const parseRetryAfter = (value: string | null | undefined, nowMs: number): number | undefined => {
  if (value === null || value === undefined || value.trim() === "") return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
};

const snippet = (text: string): string => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 117)}...` : flat === "" ? "(empty)" : flat;
};

const isOk = (status: number): boolean => status >= 200 && status < 300;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A JSON number as the decimal string the spec documents; undefined when it has no exact plain form (negative, non-finite, exponent). */
const decimalOf = (n: number): string | undefined => {
  if (!Number.isFinite(n) || n < 0) return undefined;
  const text = String(n);
  return /^[0-9]+(\.[0-9]+)?$/.test(text) ? text : undefined;
};

/** A copy of `value` without null members (null stands for "absent" on the real service), arrays kept. */
const withoutNulls = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = withoutNulls(v);
  return out;
};

const decimalAt = (obj: Record<string, unknown>, key: string): void => {
  const v = obj[key];
  if (typeof v === "number") {
    const d = decimalOf(v);
    if (d !== undefined) obj[key] = d;
  }
};

/**
 * One task item (either shape) as the schema expects it, where the service is known to
 * vary: null members dropped, and charges and durations sent as JSON numbers turned into
 * the decimal strings the spec documents (negative and non-finite numbers are left for
 * the schema to refuse: a charge must never be subtracted from spend).
 */
export const normaliseTask = (item: unknown): unknown => {
  const task = withoutNulls(item);
  if (!isRecord(task)) return task;
  if (Array.isArray(task["billing"])) {
    for (const entry of task["billing"]) {
      if (isRecord(entry)) {
        decimalAt(entry, "amount");
        decimalAt(entry, "list_price");
      }
    }
  }
  if (Array.isArray(task["outputs"])) {
    for (const o of task["outputs"]) {
      if (!isRecord(o)) continue;
      for (const key of ["duration", "mp3_duration", "wav_duration"]) decimalAt(o, key);
    }
  }
  decimalAt(task, "final_unit_deduction");
  if (isRecord(task["final_balance_deduction"])) {
    decimalAt(task["final_balance_deduction"], "quota");
    decimalAt(task["final_balance_deduction"], "list_price");
  }
  return task;
};

/** The shape of the task items each query operation answers with. */
const shapeOf: Partial<Record<Operation, TaskShape>> = {
  queryVideos: "videoTask",
  cursorVideos: "videoTask",
  getImage: "imageTask",
  listImages: "imageTask",
};

/** An envelope as the schema expects it: request_id filled in when the service left it out. */
const normaliseEnvelope = (json: unknown, headerRequestId: string, operation: Operation): unknown => {
  if (!isRecord(json)) return json;
  const out: Record<string, unknown> = { ...json };
  if (typeof out["request_id"] !== "string") out["request_id"] = headerRequestId;
  if (out["message"] === null || out["message"] === undefined) out["message"] = "";
  const shape = shapeOf[operation];
  const data = out["data"];
  if (shape !== undefined) {
    if (Array.isArray(data)) out["data"] = data.map(normaliseTask);
    else if (operation === "cursorVideos" && isRecord(data)) {
      out["data"] = { ...(withoutNulls(data) as Record<string, unknown>), ...(Array.isArray(data["result"]) ? { result: data["result"].map(normaliseTask) } : {}) };
    } else if (isRecord(data)) out["data"] = normaliseTask(data);
  } else if (data !== undefined) out["data"] = withoutNulls(data);
  return out;
};

/**
 * The data of a successful answer (validated), or the error the answer stands for.
 * `scrub` removes secrets from any text copied out of the answer.
 */
export const interpretAnswer = (
  operation: Exclude<Operation, "download">,
  answer: RawAnswer,
  schemas: AnswerSchemas,
  scrub: (text: string) => string,
  nowMs: number,
): Either.Either<unknown, ApiError> => {
  const { httpStatus } = answer;
  const headerRequestId = answer.headerRequestId ?? "";
  const retryAfterMs = parseRetryAfter(answer.retryAfter, nowMs);
  const httpFailure = (message: string, code: number | undefined, requestId: string) =>
    new ServiceError({
      operation,
      code,
      httpStatus,
      message: scrub(message),
      requestId: scrub(requestId),
      ...(headerRequestId !== "" ? { headerRequestId: scrub(headerRequestId) } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });

  let json: unknown;
  try {
    json = JSON.parse(answer.body);
  } catch {
    // A proxy's error page, or a body cut short.
    if (!isOk(httpStatus)) return Either.left(httpFailure(`HTTP ${httpStatus}: ${snippet(answer.body)}`, undefined, headerRequestId));
    return Either.left(
      new DecodeError({
        operation,
        httpStatus,
        requestId: scrub(headerRequestId),
        problems: scrub(`the body is not JSON: ${snippet(answer.body)}`),
      }),
    );
  }

  const envelope = typeof json === "object" && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  const code = envelope !== undefined && Number.isInteger(envelope["code"]) ? (envelope["code"] as number) : undefined;
  const requestId = typeof envelope?.["request_id"] === "string" ? (envelope["request_id"] as string) : headerRequestId;
  const message = typeof envelope?.["message"] === "string" ? (envelope["message"] as string) : "";

  if (code !== undefined && (code !== 0 || !isOk(httpStatus))) {
    return Either.left(httpFailure(message || `HTTP ${httpStatus}, code ${code}`, code, requestId));
  }
  if (code === undefined && !isOk(httpStatus)) {
    return Either.left(httpFailure(`HTTP ${httpStatus}: ${snippet(answer.body)}`, undefined, requestId));
  }
  const normalised = normaliseEnvelope(json, headerRequestId, operation);
  const problems = schemas.problems(operation, normalised);
  if (problems.length > 0) {
    return Either.left(new DecodeError({ operation, httpStatus, requestId: scrub(requestId), problems: scrub(problems.join("; ")) }));
  }
  return Either.right(cleanStrings((normalised as Record<string, unknown>)["data"], scrub));
};

/** One task of an answer that could not be read; the others of the answer were. */
export interface TaskAnomaly {
  readonly operation: Operation;
  /** The item's position in the answer's list (0 for B2). */
  readonly index: number;
  /** The task id, when the item carries one as a string (scrubbed). */
  readonly taskId?: string;
  /** The external id, when the item carries one as a string (scrubbed). */
  readonly externalId?: string;
  /** What was wrong, by path, scrubbed. */
  readonly problems: string;
  readonly requestId: string;
  /**
   * A charge that cannot be true (money/chargeCheck.ts): its path, the value as the
   * answer wrote it and why, scrubbed. Not a task to ask about again: the run refuses it.
   */
  readonly charge?: string;
}

/** The readable tasks of a query answer, and the unreadable ones as anomalies. */
export interface TaskAnswer {
  readonly tasks: unknown[];
  readonly anomalies: TaskAnomaly[];
  /** A3 only: the page fields besides `result` (has_more, next_cursor, count). */
  readonly page?: Record<string, unknown>;
}

const stringAt = (item: unknown, ...path: string[]): string | undefined => {
  let v: unknown = item;
  for (const k of path) v = isRecord(v) ? v[k] : undefined;
  return typeof v === "string" && v !== "" ? v : undefined;
};

/**
 * Like interpretAnswer for the query operations (queryVideos, cursorVideos, getImage,
 * listImages), but each task item is checked on its own: items that fail the schema
 * (a charge of "NaN", "1e309" or "-1", a status the spec does not know, a required
 * field missing or null) become TaskAnomaly values, and the good items come through.
 * Only an envelope or container that cannot be read fails the whole answer.
 */
export const interpretTaskAnswer = (
  operation: "queryVideos" | "cursorVideos" | "getImage" | "listImages",
  answer: RawAnswer,
  schemas: AnswerSchemas,
  scrub: (text: string) => string,
  nowMs: number,
): Either.Either<TaskAnswer, ApiError> => {
  const shape = shapeOf[operation]!;
  // Errors, unreadable bodies and bad envelopes: exactly as interpretAnswer says.
  let json: unknown;
  try {
    json = JSON.parse(answer.body);
  } catch {
    const whole = interpretAnswer(operation, answer, schemas, scrub, nowMs);
    return Either.left(Either.isLeft(whole) ? whole.left : decodeFailure(operation, answer, scrub, "the body is not JSON"));
  }
  const code = isRecord(json) && Number.isInteger(json["code"]) ? (json["code"] as number) : undefined;
  if (code === undefined || code !== 0 || !isOk(answer.httpStatus)) {
    const whole = interpretAnswer(operation, answer, schemas, scrub, nowMs);
    if (Either.isLeft(whole)) return Either.left(whole.left);
  }
  const headerRequestId = answer.headerRequestId ?? "";
  const envelope = json as Record<string, unknown>;
  const requestId = scrub(typeof envelope["request_id"] === "string" ? envelope["request_id"] : headerRequestId);
  const envelopeProblems = schemas.envelopeProblems(normaliseEnvelope({ ...envelope, data: undefined }, headerRequestId, operation));
  if (envelopeProblems.length > 0) return Either.left(decodeFailure(operation, answer, scrub, envelopeProblems.join("; "), requestId));
  const data = envelope["data"];
  let items: unknown[];
  let page: Record<string, unknown> | undefined;
  if (operation === "getImage") {
    if (!isRecord(data)) return Either.left(decodeFailure(operation, answer, scrub, "/data: must be an object (the image task)", requestId));
    items = [data];
  } else if (operation === "cursorVideos") {
    if (!isRecord(data) || !Array.isArray(data["result"]) || typeof data["has_more"] !== "boolean") {
      return Either.left(decodeFailure(operation, answer, scrub, "/data: must be {result: [...], has_more: boolean}", requestId));
    }
    items = data["result"];
    const { result: _result, ...rest } = withoutNulls(data) as Record<string, unknown>;
    page = cleanStrings(rest, scrub) as Record<string, unknown>;
  } else {
    if (!Array.isArray(data)) return Either.left(decodeFailure(operation, answer, scrub, "/data: must be an array of tasks", requestId));
    items = data;
  }
  const tasks: unknown[] = [];
  const anomalies: TaskAnomaly[] = [];
  items.forEach((raw, index) => {
    const item = normaliseTask(raw);
    // A charge that cannot be true is not read as one, whatever else the item holds (a
    // huge one passes the schema): the item is an anomaly that says so.
    const bad = impossibleCharge(item);
    const problems = bad ? [`${bad.path}: ${bad.value} is ${bad.why}`] : schemas.taskProblems(shape, item);
    if (problems.length === 0) {
      tasks.push(cleanStrings(item, scrub));
      return;
    }
    const where = operation === "getImage" ? "/data" : operation === "cursorVideos" ? `/data/result/${index}` : `/data/${index}`;
    const taskId = stringAt(raw, shape === "videoTask" ? "id" : "task_id");
    const externalId = shape === "videoTask" ? stringAt(raw, "external_id") : stringAt(raw, "task_info", "external_task_id");
    anomalies.push({
      operation,
      index,
      ...(taskId !== undefined ? { taskId: scrub(taskId) } : {}),
      ...(externalId !== undefined ? { externalId: scrub(externalId) } : {}),
      problems: scrub(problems.map((p) => `${where}${p.startsWith("(answer)") ? p.slice("(answer)".length) : p}`).join("; ")),
      requestId,
      ...(bad ? { charge: scrub(`${where}${bad.path}: ${bad.value} (${bad.why})`) } : {}),
    });
  });
  return Either.right({ tasks, anomalies, ...(page !== undefined ? { page } : {}) });
};

const decodeFailure = (operation: Operation, answer: RawAnswer, scrub: (text: string) => string, problems: string, requestId = answer.headerRequestId ?? ""): DecodeError =>
  new DecodeError({ operation, httpStatus: answer.httpStatus, requestId: scrub(requestId), problems: scrub(problems) });
