// Turns one HTTP answer (status, Retry-After, body text) into the operation's data or a
// typed error. Pure: the envelope code decides success or failure; a success must match
// the operation's schema; anything unreadable becomes a DecodeError that says why.

import { Either } from "effect";
import { DecodeError, ServiceError, type ApiError, type Operation } from "./ApiError.js";
import type { AnswerSchemas } from "./AnswerSchemas.js";

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
  const problems = schemas.problems(operation, json);
  if (problems.length > 0) {
    return Either.left(new DecodeError({ operation, httpStatus, requestId: scrub(requestId), problems: scrub(problems.join("; ")) }));
  }
  return Either.right(envelope!["data"]);
};
