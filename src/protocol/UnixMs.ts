// Times as Unix milliseconds, as the service sends them and the lockfile keeps them. The
// service's are untrusted: the answer schemas bound them (schemas/api/defs.schema.json
// `timestampMs`), records read back from older lockfiles may hold anything, and a time no
// Date can show must never stop a report from being written. Pure.

/** 9999-12-31T23:59:59.999Z: the last time an ISO-8601 date with a 4-digit year shows (the wire schema's maximum). */
export const MAX_UNIX_MS = 253_402_300_799_999;

/** A whole number of milliseconds from 1970 to the end of year 9999. */
export const isUnixMs = (ms: number | undefined): ms is number =>
  typeof ms === "number" && Number.isInteger(ms) && ms >= 0 && ms <= MAX_UNIX_MS;

/** The ISO-8601 text of a time, or undefined when it is absent or no such time (the field is then left out). */
export const isoTime = (ms: number | undefined): string | undefined => (isUnixMs(ms) ? new Date(ms).toISOString() : undefined);
