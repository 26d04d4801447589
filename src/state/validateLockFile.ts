// Checks parsed lockfile data against schemas/lockfile.schema.json (the format's one
// definition, shipped with the package). The validator is compiled once, on first use.

import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { LockFile } from "./LockFile.js";

const schemaUrl = new URL("../../schemas/lockfile.schema.json", import.meta.url);

// Two validators: a fail-fast one for the usual valid file (large lockfiles load faster),
// and one collecting every error, used only to explain an invalid file.
let compiled: { fast: ValidateFunction; all: ValidateFunction } | undefined;
const validators = () => {
  if (!compiled) {
    const schema = JSON.parse(readFileSync(schemaUrl, "utf8")) as object;
    compiled = {
      fast: new Ajv2020({ allErrors: false, strict: true }).compile(schema),
      all: new Ajv2020({ allErrors: true, strict: true }).compile(schema),
    };
  }
  return compiled;
};

const describe = (error: ErrorObject): string => {
  const where = error.instancePath === "" ? "(top level)" : error.instancePath;
  const detail =
    error.keyword === "enum"
      ? `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")}`
      : error.keyword === "additionalProperties"
        ? `unknown property '${(error.params as { additionalProperty: string }).additionalProperty}'`
        : (error.message ?? error.keyword);
  return `${where}: ${detail} (schema ${error.schemaPath})`;
};

/** The problems of `data` as a lockfile (at most `max`, most useful first), or [] when valid. */
export const lockFileProblems = (data: unknown, max = 5): string[] => {
  const { fast, all } = validators();
  if (fast(data)) return [];
  all(data);
  const errors = all.errors ?? [];
  const lines = errors.slice(0, max).map(describe);
  if (errors.length > max) lines.push(`... and ${errors.length - max} more`);
  return lines;
};

export const isLockFile = (data: unknown): data is LockFile => lockFileProblems(data, 1).length === 0;
