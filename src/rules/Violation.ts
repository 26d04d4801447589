// What a broken rule of the spec looks like, for the emulator (which answers it as an
// error envelope) and for preflight (which points at the manifest position).

export interface Violation {
  /** Path into the request body, e.g. "settings.duration", "contents[2].url", "image_list[0].image". */
  readonly field: string;
  /** Stable rule id, e.g. "video.duration.range"; tests and docs refer to it. */
  readonly rule: string;
  /** A sentence a person can act on; names the field and the rule. */
  readonly message: string;
  /** The service code this answers with: 1201 invalid parameter, 1203 unknown resource. */
  readonly code: 1201 | 1203;
}

/** Builds a violation whose message starts with the field, so every message names it. */
export const violation = (
  field: string,
  rule: string,
  text: string,
  code: 1201 | 1203 = 1201,
): Violation => ({ field, rule, message: `${field}: ${text}`, code });
