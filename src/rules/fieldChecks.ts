// Checks of field shapes that several operations share: enums, optional strings and the
// watermark_info object. Each appends its violations to `out`.

import { describe, isRecord } from "./values.js";
import { violation, type Violation } from "./Violation.js";

export function checkEnum(
  value: unknown,
  field: string,
  rule: string,
  allowed: readonly string[],
  out: Violation[],
): void {
  if (value === undefined) return;
  if (typeof value !== "string" || !allowed.includes(value)) {
    out.push(violation(field, rule, `must be one of ${allowed.join(", ")} (got ${describe(value)})`));
  }
}

export function checkOptionalString(value: unknown, field: string, rule: string, out: Violation[]): void {
  if (value !== undefined && typeof value !== "string") {
    out.push(violation(field, rule, `must be a string (got ${describe(value)})`));
  }
}

export function checkWatermark(value: unknown, field: string, rulePrefix: string, out: Violation[]): void {
  if (value === undefined) return;
  if (!isRecord(value)) {
    out.push(violation(field, `${rulePrefix}.object`, `must be an object {enabled: boolean} (got ${describe(value)})`));
    return;
  }
  const enabled = value["enabled"];
  if (enabled !== undefined && typeof enabled !== "boolean") {
    out.push(violation(`${field}.enabled`, `${rulePrefix}.enabled`, `must be a boolean (got ${describe(enabled)})`));
  }
}
