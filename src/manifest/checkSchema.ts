// Checks a parsed manifest against schemas/manifest.schema.json (the one definition of
// the format) and turns ajv's errors into positioned diagnostics: an unknown key points
// at the key, a missing key at its parent, anything else at the value.

import type { ErrorObject, ValidateFunction } from "ajv";
import type { Document } from "yaml";
import type { Diagnostic } from "./Diagnostic.js";
import type { SourceFile } from "./SourceFile.js";
import * as compiled from "./manifestSchema.generated.js";
import { keyOffsetAt, offsetAt, type YamlPath } from "./YamlDocument.js";

export const manifestSchemaUrl = new URL("../../schemas/manifest.schema.json", import.meta.url);

// The schema compiled ahead of time (scripts/compileSchemas.mjs; ajv options allErrors,
// strict, allowUnionTypes, verbose): a start neither loads ajv's compiler nor compiles
// the schema, which cost about 250 ms of CPU per `validate`.
const validator = (): ValidateFunction => (compiled as unknown as { all: { manifest: ValidateFunction } }).all.manifest;

const pointerToPath = (pointer: string): (string | number)[] =>
  pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
        .map((s) => (/^\d+$/.test(s) ? Number(s) : s));

export const showPath = (path: YamlPath, root = "the manifest"): string =>
  path.length === 0
    ? root
    : path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");

const editDistance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
};

/** Patterns of the schema, said in words. */
const PATTERN_WORDS: Record<string, string> = {
  "^[a-z0-9][a-z0-9_-]{0,31}$": "lowercase letters, digits, '-' and '_', starting with a letter or digit, at most 32 characters",
  "^(?!__proto__$)[A-Za-z_][A-Za-z0-9_]*$": "a name of letters, digits and '_', not starting with a digit, and not '__proto__' (JavaScript reserves it)",
  "^[A-Za-z][A-Za-z0-9_-]{0,39}$": "a name of letters, digits, '-' and '_', starting with a letter, at most 40 characters",
  "^[a-z0-9][a-z0-9_-]*\\.(outputs|tasks)$": "'<job>.outputs' or '<job>.tasks'",
  "^[0-9]+(\\.[0-9]+)?$": "a decimal number such as 40 or 12.50",
  "^[0-9]+$": "digits",
  "\\.(csv|json|jsonl|ndjson|ya?ml)$": "a file ending in .csv, .json, .jsonl, .ndjson, .yaml or .yml",
};

const isTemplateBranch = (e: ErrorObject): boolean =>
  (e.parentSchema as { pattern?: string } | undefined)?.pattern === "\\{\\{";

const describe = (e: ErrorObject): string => {
  const p = e.params as Record<string, unknown>;
  if (isTemplateBranch(e)) return "a template such as \"{{ row.field }}\"";
  switch (e.keyword) {
    case "type": {
      const words: Record<string, string> = { array: "a list", object: "a mapping", integer: "an integer", number: "a number", string: "a string", boolean: "true or false" };
      return String(p.type).split(",").map((t) => words[t] ?? t).join(" or ");
    }
    case "enum":
      return `one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "const":
      return JSON.stringify(p.allowedValue);
    case "pattern":
      return PATTERN_WORDS[String(p.pattern)] ?? `text matching ${String(p.pattern)}`;
    case "minimum":
      return `at least ${String(p.limit)}`;
    case "maximum":
      return `at most ${String(p.limit)}`;
    case "minLength":
      return p.limit === 1 ? "not empty" : `at least ${String(p.limit)} characters`;
    case "minItems":
      return `a list of at least ${String(p.limit)} item(s)`;
    default:
      return e.message ?? e.keyword;
  }
};

const unique = (xs: string[]): string[] => [...new Set(xs)];

/** Schema errors as diagnostics (empty when the manifest matches the schema). */
export const checkSchema = (value: unknown, doc: Document.Parsed, source: SourceFile): Diagnostic[] =>
  schemaDiagnostics(validator(), value, doc, source, "the manifest");

/**
 * Any YAML file's errors against a compiled validator (ajv options allErrors, verbose),
 * as positioned diagnostics; `root` names the whole file in messages. The review file
 * (src/review/) is checked with this too.
 */
export const schemaDiagnostics = (validate: ValidateFunction, value: unknown, doc: Document.Parsed, source: SourceFile, root: string): Diagnostic[] => {
  if (validate(value)) return [];
  const errors = (validate.errors ?? []).filter((e) => e.keyword !== "if");
  const byPath = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    const list = byPath.get(e.instancePath) ?? [];
    list.push(e);
    byPath.set(e.instancePath, list);
  }
  const diagnostics: Diagnostic[] = [];
  const seen = new Set<string>();
  const push = (offset: number, message: string) => {
    const key = `${offset}\u0000${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    diagnostics.push(source.at(offset, message));
  };
  for (const [pointer, list] of byPath) {
    const path = pointerToPath(pointer);
    const where = showPath(path, root);
    const hasAlternatives = list.some((e) => e.keyword === "anyOf" || e.keyword === "oneOf");
    if (hasAlternatives) {
      // A deeper error explains the problem better than "matches no alternative".
      const deeper = [...byPath.keys()].some((k) => k.startsWith(`${pointer}/`));
      if (deeper) continue;
      const wanted = unique(list.filter((e) => e.keyword !== "anyOf" && e.keyword !== "oneOf").map(describe));
      push(offsetAt(doc, path), `${where} must be ${wanted.join(", or ")}`);
      continue;
    }
    for (const e of list) {
      const p = e.params as Record<string, unknown>;
      if (e.keyword === "additionalProperties") {
        const key = String(p.additionalProperty);
        const allowed = Object.keys((e.parentSchema as { properties?: object }).properties ?? {});
        const close = allowed
          .map((k) => ({ k, d: editDistance(key, k) }))
          .filter((x) => x.d <= Math.max(1, Math.floor(key.length / 3)))
          .sort((a, b) => a.d - b.d)[0];
        const hint = close ? ` (did you mean '${close.k}'?)` : allowed.length ? `; allowed: ${allowed.join(", ")}` : "";
        push(keyOffsetAt(doc, path, key), `unknown key '${key}' in ${where}${hint}`);
      } else if (e.keyword === "required") {
        const missing = String(p.missingProperty);
        const last = path[path.length - 1];
        const at = typeof last === "string" ? keyOffsetAt(doc, path.slice(0, -1), last) : offsetAt(doc, path);
        push(at, `${where} is missing the required key '${missing}'`);
      } else if (e.keyword === "propertyNames") {
        // The inner error (pattern) says what a name must look like; point at the key.
        const name = String(p.propertyName);
        const inner = list.find((x) => x.keyword !== "propertyNames" && x.propertyName === name);
        const rule = inner ? describe(inner) : "a valid name";
        push(keyOffsetAt(doc, path, name), `invalid key '${name}' in ${where}: must be ${rule}`);
      } else if (e.propertyName !== undefined) {
        // Reported together with its propertyNames error above.
        continue;
      } else if (e.keyword === "minProperties") {
        push(offsetAt(doc, path), `${where} must not be empty`);
      } else {
        push(offsetAt(doc, path), `${where} must be ${describe(e)}`);
      }
    }
  }
  return diagnostics;
};
