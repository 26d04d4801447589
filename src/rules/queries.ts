// The parameter rules of the three query operations: A2 (video tasks by ids), A3 (video
// tasks by cursor) and B3 (image task pages). An empty string counts as absent, as the
// service's own examples send empty values.

import { describe, isRecord } from "./values.js";
import { violation, type Violation } from "./Violation.js";

export const CURSOR_LIMIT = { min: 1, max: 500, default: 100 } as const;
export const CURSOR_DEFAULT_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;
export const CURSOR_FILTER_VALUES = {
  status: ["submitted", "processing", "succeeded", "failed"],
  product_type: ["video", "image", "try_on"],
} as const;
export const PAGE_NUM = { min: 1, max: 1000, default: 1 } as const;
export const PAGE_SIZE = { min: 1, max: 500, default: 30 } as const;

const present = (v: string | undefined): v is string => v !== undefined && v !== "";

/** A2: `task_ids` and `external_task_ids` are alternatives, never both. */
export function checkTaskQuery(params: Record<string, string | undefined>): Violation[] {
  if (present(params["task_ids"]) && present(params["external_task_ids"])) {
    return [
      violation(
        "task_ids",
        "query.ids.both",
        "task_ids and external_task_ids must not be used together: query by one of them",
      ),
    ];
  }
  return [];
}

/**
 * A3 body. `now` (Unix ms) lets the defaults of a one-sided window be judged too
 * (end_time defaults to now, start_time to end_time minus 30 days); without it only a
 * window with both ends is compared.
 */
export function checkCursorQuery(body: unknown, now?: number): Violation[] {
  const out: Violation[] = [];
  if (body === undefined) return out;
  if (!isRecord(body)) {
    return [violation("body", "cursor.body.object", `must be a JSON object (got ${describe(body)})`)];
  }

  const cursor = body["cursor"];
  if (cursor !== undefined && typeof cursor !== "string") {
    out.push(violation("cursor", "cursor.cursor.type", `must be a string (got ${describe(cursor)})`));
  }
  // A non-empty cursor makes the service ignore the window, so it is not judged.
  if (!(typeof cursor === "string" && cursor !== "")) {
    const start = readTimestamp(body["start_time"], "start_time", out);
    const end = readTimestamp(body["end_time"], "end_time", out);
    if (start !== null && end !== null) {
      const effectiveEnd = end ?? now;
      const effectiveStart = start ?? (effectiveEnd === undefined ? undefined : effectiveEnd - CURSOR_DEFAULT_WINDOW_MS);
      if (effectiveStart !== undefined && effectiveEnd !== undefined && !(effectiveStart < effectiveEnd)) {
        out.push(
          violation(
            "start_time",
            "cursor.window.order",
            `must be earlier than end_time (got start_time ${effectiveStart}${start === undefined ? " by default" : ""}, end_time ${effectiveEnd}${end === undefined ? " (now)" : ""})`,
          ),
        );
      }
    }
  }

  const limit = body["limit"];
  if (limit !== undefined) {
    if (typeof limit !== "number" || !Number.isInteger(limit)) {
      out.push(violation("limit", "cursor.limit.type", `must be an integer (got ${describe(limit)})`));
    } else if (limit < CURSOR_LIMIT.min || limit > CURSOR_LIMIT.max) {
      out.push(violation("limit", "cursor.limit.range", `must be from ${CURSOR_LIMIT.min} to ${CURSOR_LIMIT.max} (got ${limit})`));
    }
  }

  const filters = body["filters"];
  if (filters !== undefined) {
    if (!Array.isArray(filters)) {
      out.push(violation("filters", "cursor.filters.type", `must be an array of {key, values} (got ${describe(filters)})`));
    } else {
      filters.forEach((f: unknown, i) => checkFilter(f, `filters[${i}]`, out));
    }
  }
  return out;
}

/** undefined: absent; null: present but invalid (already reported). */
function readTimestamp(value: unknown, field: string, out: Violation[]): number | undefined | null {
  if (value === undefined || value === "") return undefined;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === "string" && /^\d{1,16}$/.test(value)) return Number(value);
  out.push(
    violation(field, `cursor.${field}.type`, `must be a Unix timestamp in milliseconds, as a string or a number (got ${describe(value)})`),
  );
  return null;
}

function checkFilter(filter: unknown, at: string, out: Violation[]): void {
  if (!isRecord(filter)) {
    out.push(violation(at, "cursor.filter.object", `must be an object {key, values} (got ${describe(filter)})`));
    return;
  }
  const key = filter["key"];
  const keys = Object.keys(CURSOR_FILTER_VALUES);
  let allowed: readonly string[] | undefined;
  if (key !== undefined) {
    if (typeof key !== "string" || !keys.includes(key)) {
      out.push(violation(`${at}.key`, "cursor.filter.key", `must be one of ${keys.join(", ")} (got ${describe(key)})`));
    } else {
      allowed = CURSOR_FILTER_VALUES[key as keyof typeof CURSOR_FILTER_VALUES];
    }
  }
  const values = filter["values"];
  if (values === undefined) return;
  if (!Array.isArray(values)) {
    out.push(violation(`${at}.values`, "cursor.filter.values.type", `must be an array of strings (got ${describe(values)})`));
    return;
  }
  values.forEach((v: unknown, j) => {
    if (typeof v !== "string") {
      out.push(violation(`${at}.values[${j}]`, "cursor.filter.values.type", `must be a string (got ${describe(v)})`));
    } else if (allowed !== undefined && !allowed.includes(v)) {
      out.push(
        violation(`${at}.values[${j}]`, "cursor.filter.values.enum", `must be one of ${allowed.join(", ")} for key ${String(key)} (got ${describe(v)})`),
      );
    }
  });
}

/** B3 query string: pageNum 1..1000, pageSize 1..500, integers. */
export function checkImageList(params: Record<string, string | undefined>): Violation[] {
  const out: Violation[] = [];
  for (const [field, range] of [
    ["pageNum", PAGE_NUM],
    ["pageSize", PAGE_SIZE],
  ] as const) {
    const raw = params[field];
    if (!present(raw)) continue;
    if (!/^-?\d+$/.test(raw)) {
      out.push(violation(field, `list.${field}.type`, `must be an integer (got ${describe(raw)})`));
      continue;
    }
    const n = Number(raw);
    if (n < range.min || n > range.max) {
      out.push(violation(field, `list.${field}.range`, `must be from ${range.min} to ${range.max} (got ${raw})`));
    }
  }
  return out;
}
