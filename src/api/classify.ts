// What an API failure means for the caller, decided by the envelope code
// (spec/service-behaviour.md), never by the HTTP status alone: HTTP 429 carries both
// "back off" (1302) and "stop, the account is out of money" (1102).

import { createOperations, type ApiError, type Operation } from "./ApiError.js";

/**
 * - `retry`: transient; the same request may be sent again after a pause.
 * - `no-slot`: the account's concurrency is full (1303); wait for a task to end.
 * - `refused`: the request can never succeed here: the account cannot be used (auth, balance,
 *   permission, IP), or the address or the service's name is wrong (1202 no such API, 1203
 *   naming a model on a create): stop all submission (exit 5). What to check: refusal.ts.
 * - `task-rejected`: this request is wrong or not allowed; fail the task with the service's message.
 *   For a download it means the link is unusable (expired, deleted): query the task again.
 * - `unknown-outcome`: a create that may or may not have made the task: look it up by
 *   external_task_id before sending it again.
 */
export type ErrorClass = "retry" | "no-slot" | "refused" | "task-rejected" | "unknown-outcome";

// 1202 (no such API: a wrong base URL or service name) is the same for every request
// sent there, so one answer stops the run rather than failing every task one by one.
const refusedCodes = new Set([1000, 1001, 1002, 1003, 1004, 1100, 1101, 1102, 1103, 1202, 1304]);
const rejectedCodes = new Set([1200, 1201, 1203, 1300, 1301]);
const retryCodes = new Set([1302, 5000, 5001, 5002]);

/** The class of a service code alone; undefined when the code says nothing (absent or unknown). */
const classOfCode = (code: number | undefined): ErrorClass | undefined => {
  if (code === undefined) return undefined;
  if (code === 1303) return "no-slot";
  if (retryCodes.has(code)) return "retry";
  if (refusedCodes.has(code)) return "refused";
  if (rejectedCodes.has(code)) return "task-rejected";
  // Codes the table does not list: follow their family, so a new account-level code
  // stops submission rather than failing every task one by one.
  if (code >= 1000 && code < 1200) return "refused";
  if (code >= 1200 && code < 1400) return "task-rejected";
  if (code >= 5000 && code < 6000) return "retry";
  return undefined;
};

/** The service's own words of a message: the values it quotes ('…', "…", `…`) taken out, so nothing we sent speaks for it. */
const ownWords = (message: string): string => message.replace(/'[^']*'|"[^"]*"|`[^`]*`/g, " ");

/**
 * A 1203 (resource does not exist) answering a create that says the model does not exist
 * (a wrong service name, a retired model): every task naming it gets the same answer.
 * One naming an element (this task's own input), or nothing at all, is about this task.
 */
export const isMissingModel = (error: ApiError): boolean => {
  if (error._tag !== "ServiceError" || error.code !== 1203 || !createOperations.has(error.operation)) return false;
  const words = ownWords(error.message);
  return /\bmodel/i.test(words) && !/\belement/i.test(words);
};

/**
 * True when a create may have reached the service and made the task although no
 * success answer arrived: a 5xx (with a 5xxx code or none), a timeout, a connection lost
 * after sending, or a success answer that could not be read. Any 1xxx answer means the
 * task was not created. Always false for operations that create nothing.
 */
export const isOutcomeUnknown = (op: Operation, error: ApiError): boolean => {
  if (!createOperations.has(op)) return false;
  switch (error._tag) {
    case "TransportError":
      return error.phase === "sent";
    case "RequestTimeout":
      return error.phase === "sent";
    case "DecodeError":
      // The service answered something we cannot read; it may have made the task.
      return error.httpStatus < 400 || error.httpStatus >= 500;
    case "ServiceError":
      if (error.code !== undefined && error.code >= 1000 && error.code < 2000) return false;
      return error.httpStatus >= 500 || (error.code !== undefined && error.code >= 5000 && error.code < 6000);
  }
};

/**
 * The class of an error. A create whose outcome is unknown (see isOutcomeUnknown) is
 * "unknown-outcome", never "retry": the engine must look it up before sending it again.
 */
export const classify = (error: ApiError): ErrorClass => {
  if (isOutcomeUnknown(error.operation, error)) return "unknown-outcome";
  switch (error._tag) {
    case "TransportError":
    case "RequestTimeout":
      return "retry";
    case "DecodeError":
      // A garbled answer (truncated by a proxy, say) is worth asking again; the retry
      // schedule bounds how often, and the error surfaces when it runs out.
      return "retry";
    case "ServiceError": {
      // A result link answering 4xx (expired, tampered, deleted: 403 1103, 404 1203) says
      // nothing about the account: the link is unusable, query the task for a fresh one.
      if (error.operation === "download" && error.httpStatus >= 400 && error.httpStatus < 500 && error.code !== 1302) {
        return error.httpStatus === 408 || (error.httpStatus === 429 && error.code === undefined) ? "retry" : "task-rejected";
      }
      if (isMissingModel(error)) return "refused";
      const byCode = classOfCode(error.code);
      if (byCode !== undefined) return byCode;
      // No code to go by: only the HTTP status is left.
      if (error.httpStatus >= 500 || error.httpStatus === 408 || (error.httpStatus === 429 && error.code === undefined)) {
        return "retry";
      }
      return "task-rejected";
    }
  }
};

/**
 * Nothing answers at this address at all: the connection was refused, the host has no
 * address (no such host), or no route leads there; the request never left. Says nothing
 * of a service that answered once and is lost now (a restart, a network blip).
 */
export const isUnreachable = (error: ApiError): boolean => error._tag === "TransportError" && error.phase === "connect";

/** The pause the service asked for (Retry-After), in ms; 0 when none. */
export const retryAfterOf = (error: ApiError): number =>
  error._tag === "ServiceError" ? (error.retryAfterMs ?? 0) : 0;

/**
 * The service says the task asked for does not exist (or is not visible yet): 1203 or an
 * HTTP 404, as the spec reads it, or the live service's 400 code 1201 "Task not found by
 * id/external id: X" for an image task. A query's "nothing here", never a rejection.
 */
export const isTaskNotFound = (error: ApiError): boolean =>
  error._tag === "ServiceError" &&
  (error.code === 1203 || error.httpStatus === 404 || (error.code === 1201 && /task not found/i.test(error.message)));
