// Reads YAML text (a manifest or a YAML data file) keeping every node's place, so any
// later check can point at the exact key or value. Duplicate keys and alias bombs are
// reported here, as positioned diagnostics, before anything looks at the data.

import { isMap, isPair, isScalar, isSeq, parseDocument, visit, type Document, type Node } from "yaml";
import type { Diagnostic } from "./Diagnostic.js";
import type { SourceFile } from "./SourceFile.js";

export type YamlPath = readonly (string | number)[];

/** Aliases allowed in one file: plenty for real manifests, far too few for a "billion laughs". */
export const MAX_ALIASES = 1000;

export interface ParsedYaml {
  readonly doc: Document.Parsed;
  /** Plain data, or undefined when the text could not be read. */
  readonly value: unknown;
  readonly diagnostics: Diagnostic[];
}

const yamlMessage = (code: string, message: string): string => {
  if (code === "DUPLICATE_KEY") return "duplicate key: a key may appear only once in a mapping";
  return message.replace(/\s+at line \d+, column \d+.*$/s, "");
};

/** Where the document's data starts (after leading comments). */
export const contentStart = (doc: Document.Parsed): number => (doc.contents as Node | null)?.range?.[0] ?? 0;

/**
 * Integers a number cannot hold exactly (above 2^53: the service's 64-bit element ids)
 * become their digit strings instead of a rounded number, so they are never changed.
 */
const keepLongIntegers = (doc: Document.Parsed): void => {
  visit(doc, {
    Scalar(_key, node) {
      const v = node.value;
      const text = (node as { source?: unknown }).source;
      if (typeof v === "number" && Number.isInteger(v) && !Number.isSafeInteger(v) && typeof text === "string" && /^[0-9]+$/.test(text)) {
        node.value = text;
      }
    },
  });
};

export const parseYaml = (source: SourceFile): ParsedYaml => {
  const doc = parseDocument(source.text, {
    uniqueKeys: true,
    prettyErrors: false,
    merge: false,
  });
  const diagnostics: Diagnostic[] = doc.errors.map((e) =>
    source.at(e.pos[0], yamlMessage(e.code, e.message)),
  );
  for (const w of doc.warnings) diagnostics.push(source.at(w.pos[0], yamlMessage(w.code, w.message), "warning"));
  if (diagnostics.some((d) => d.severity === "error")) return { doc, value: undefined, diagnostics };
  keepLongIntegers(doc);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (error) {
    const message =
      error instanceof ReferenceError && /alias/i.test(error.message)
        ? `too many alias expansions (limit ${MAX_ALIASES} per file): aliases that refer to aliases can grow the data exponentially`
        : `cannot read the YAML: ${(error as Error).message}`;
    diagnostics.push(source.at(contentStart(doc), message));
    return { doc, value: undefined, diagnostics };
  }
  return { doc, value, diagnostics };
};

const childOf = (node: unknown, key: string | number): Node | undefined => {
  if (isMap(node)) {
    for (const pair of node.items) {
      const k = isScalar(pair.key) ? pair.key.value : pair.key;
      if (k === key || String(k) === String(key)) return pair.value as Node | undefined;
    }
    return undefined;
  }
  if (isSeq(node) && typeof key === "number") return node.items[key] as Node | undefined;
  return undefined;
};

const keyOf = (node: unknown, key: string | number): Node | undefined => {
  if (!isMap(node)) return undefined;
  for (const pair of node.items) {
    if (!isPair(pair)) continue;
    const k = isScalar(pair.key) ? pair.key.value : pair.key;
    if (k === key || String(k) === String(key)) return pair.key as Node;
  }
  return undefined;
};

const startOf = (node: Node | undefined | null): number | undefined => node?.range?.[0];

/**
 * The offset of the value at `path`, or, when it does not exist, of the deepest node on
 * the way there (preferring that node's key, which is where a person looks).
 */
export const offsetAt = (doc: Document.Parsed, path: YamlPath): number => {
  let node: unknown = doc.contents;
  let best = startOf(doc.contents as Node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!;
    const next = childOf(node, key);
    if (next === undefined || next === null) {
      // The value is missing (or null): point at its key if there is one.
      const k = keyOf(node, key);
      return startOf(k) ?? best;
    }
    const s = startOf(next);
    if (s === undefined) return best;
    best = s;
    // A null value has no range worth pointing at; its key is better.
    if (isScalar(next) && next.value === null) {
      return startOf(keyOf(node, key)) ?? best;
    }
    node = next;
  }
  return best;
};

/** The offset of the key `key` inside the mapping at `path` (falls back to the mapping). */
export const keyOffsetAt = (doc: Document.Parsed, path: YamlPath, key: string): number => {
  let node: unknown = doc.contents;
  for (const p of path) {
    const next = childOf(node, p);
    if (next === undefined || next === null) return offsetAt(doc, path);
    node = next;
  }
  return startOf(keyOf(node, key)) ?? offsetAt(doc, path);
};

/** For a missing key: point at the key that holds the parent mapping, or the mapping itself. */
export const parentOffsetAt = (doc: Document.Parsed, path: YamlPath): number => {
  if (path.length === 0) return startOf(doc.contents as Node) ?? 0;
  const parent = path.slice(0, -1);
  let node: unknown = doc.contents;
  for (const p of parent) {
    const next = childOf(node, p);
    if (next === undefined || next === null) return offsetAt(doc, path);
    node = next;
  }
  return startOf(keyOf(node, path[path.length - 1]!)) ?? offsetAt(doc, path);
};

/** The scalar node at `path`, for template column arithmetic. */
export const scalarAt = (doc: Document.Parsed, path: YamlPath): { offset: number; type?: string; oneLine: boolean } | undefined => {
  let node: unknown = doc.contents;
  for (const p of path) {
    node = childOf(node, p);
    if (node === undefined || node === null) return undefined;
  }
  if (!isScalar(node) || !node.range) return undefined;
  return { offset: node.range[0], type: node.type, oneLine: !String(node.source ?? "").includes("\n") };
};
