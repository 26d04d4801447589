// What an API handler decides: an HTTP status and the envelope's code, message and
// data. The server adds the request id and writes it.

export interface Answer {
  readonly http: number;
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export const ok = (data: unknown): Answer => ({ http: 200, code: 0, message: "success", data });

export const fail = (http: number, code: number, message: string): Answer => ({ http, code, message });

/** The HTTP status that goes with a service code (spec/service-behaviour.md). */
export const httpStatusOf = (code: number): number => {
  if (code >= 1000 && code <= 1004) return 401;
  if (code === 1103) return 403;
  if (code === 1202 || code === 1203) return 404;
  if ((code >= 1100 && code <= 1102) || (code >= 1302 && code <= 1304)) return 429;
  if (code === 5001) return 503;
  if (code === 5002) return 504;
  if (code >= 5000) return 500;
  return 400;
};
