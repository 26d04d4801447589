// A quick check of the usual task line (`$defs/taskLine` of schemas/lockfile.schema.json)
// for loading large lockfiles: a line it accepts is one the schema accepts. It knows only
// the fields a task line usually has; a line with any other field (error, upstream,
// abandoned, meta, an unknown one) or anything wrong is not accepted here, and the
// compiled schema (validateLockFile.ts) decides, and explains: it stays the authority
// for every message. test/state/taskLineCheck.test.ts holds the two to agreement.

const STATES = new Set(["planned", "submitting", "submitted", "processing", "succeeded", "downloaded", "failed", "rejected"]);
const OUTPUT_TYPES = new Set(["video", "image", "audio", "voice", "element"]);
const VARIANTS = new Set(["main", "watermark", "mp3", "wav", "meta"]);
const CASH_TYPES = new Set(["balance", "test_balance"]);
const CURRENCIES = new Set(["CNY", "USD"]);
const PACKAGE_TYPES = new Set(["video", "image", "audio"]);

type Data = Record<string, unknown>;

const isObject = (v: unknown): v is Data => v !== null && typeof v === "object" && !Array.isArray(v);
const isInteger = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);
const isCount = (v: unknown): boolean => isInteger(v) && v >= 0;
const isFilled = (v: unknown): boolean => typeof v === "string" && v.length > 0;

/** `^[0-9a-f]{64}$` */
const isSha256 = (v: unknown): boolean => {
  if (typeof v !== "string" || v.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = v.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
};

/** The index after the ASCII digits of `v` from `i` on (`i` when there are none). */
const digitsEnd = (v: string, i: number): number => {
  while (i < v.length && v.charCodeAt(i) >= 48 && v.charCodeAt(i) <= 57) i++;
  return i;
};

/** `^-?[0-9]+(\.[0-9]+)?$` (no closure per call: this runs twice per line of a large lockfile). */
const isDecimal = (v: unknown): boolean => {
  if (typeof v !== "string") return false;
  const from = v.charCodeAt(0) === 45 ? 1 : 0;
  const whole = digitsEnd(v, from);
  if (whole === from) return false;
  if (whole === v.length) return true;
  if (v.charCodeAt(whole) !== 46) return false;
  const fraction = digitsEnd(v, whole + 1);
  return fraction > whole + 1 && fraction === v.length;
};

/** `^[!#-~]{1,8}$` */
const isEtag = (v: unknown): boolean => {
  if (typeof v !== "string" || v.length < 1 || v.length > 8) return false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c !== 33 && (c < 35 || c > 126)) return false;
  }
  return true;
};

/** `at`: 1 to 5 items, the first a Unix ms, the others integers or null. */
const isTimes = (v: unknown): boolean => {
  if (!Array.isArray(v) || v.length < 1 || v.length > 5 || !isCount(v[0])) return false;
  for (let i = 1; i < v.length; i++) if (v[i] !== null && !isInteger(v[i])) return false;
  return true;
};

const isOutputLine = (o: unknown): boolean => {
  if (!isObject(o)) return false;
  let file = false;
  let path = false;
  for (const k in o) {
    const v = o[k];
    switch (k) {
      case "type":
        if (!OUTPUT_TYPES.has(v as string)) return false;
        break;
      case "index":
      case "size":
      case "deleted_at":
        if (!isCount(v)) return false;
        break;
      case "variant":
        if (!VARIANTS.has(v as string)) return false;
        break;
      case "file":
        if (v !== null && !isFilled(v)) return false;
        file = true;
        break;
      case "path":
        if (!isFilled(v)) return false;
        path = true;
        break;
      case "sha256":
        if (!isSha256(v)) return false;
        break;
      case "remote_id":
      case "group_id":
        if (typeof v !== "string") return false;
        break;
      case "etag":
        if (!isEtag(v)) return false;
        break;
      default:
        return false; // meta or unknown: the schema decides
    }
  }
  return !(file && path);
};

const isBillLine = (b: unknown): boolean => {
  if (!isObject(b)) return false;
  let amounts = 0;
  for (const k in b) {
    const v = b[k];
    switch (k) {
      case "cash":
      case "unit":
        amounts++;
        if (!isDecimal(v)) return false;
        break;
      case "list":
        if (!isDecimal(v)) return false;
        break;
      case "cash_type":
        if (!CASH_TYPES.has(v as string)) return false;
        break;
      case "currency":
        if (!CURRENCIES.has(v as string)) return false;
        break;
      case "package_type":
        if (!PACKAGE_TYPES.has(v as string)) return false;
        break;
      default:
        return false;
    }
  }
  return amounts === 1;
};

const allOf = (v: unknown, check: (item: unknown) => boolean): boolean => {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (!check(v[i])) return false;
  return true;
};

/**
 * True when `data` is a task line of the usual fields that matches the schema; false
 * means only "not decided here": ask the schema (lockSchemaProblems("taskLine", data)).
 */
export const isPlainTaskLine = (data: unknown): boolean => {
  if (!isObject(data)) return false;
  let id = false;
  let kind = false;
  let at = false;
  let hashes = 0;
  for (const k in data) {
    const v = data[k];
    switch (k) {
      case "id":
        if (!isFilled(v)) return false;
        id = true;
        break;
      case "job":
      case "task_id":
      case "superseded_by":
        if (!isFilled(v)) return false;
        break;
      case "kind":
        if (v !== "image" && v !== "video") return false;
        kind = true;
        break;
      case "state":
        if (!STATES.has(v as string)) return false;
        break;
      case "take":
      case "attempt":
      case "pruned_at":
        if (!isCount(v)) return false;
        break;
      case "at":
        if (!isTimes(v)) return false;
        at = true;
        break;
      case "hash":
      case "hash_rest":
        if (!isFilled(v)) return false;
        hashes++;
        break;
      case "dir":
        if (typeof v !== "string") return false;
        break;
      case "vars":
        if (!isObject(v)) return false;
        break;
      case "out":
        if (!allOf(v, isOutputLine)) return false;
        break;
      case "bill":
        if (!allOf(v, isBillLine)) return false;
        break;
      default:
        return false; // error, upstream, abandoned or unknown: the schema decides
    }
  }
  return id && kind && at && hashes === 1;
};
