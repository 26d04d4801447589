// Checks parsed lockfile data against schemas/lockfile.schema.json (the format's one
// definition, shipped with the package): a header or task line (version 2 or 3), a version-1
// document, or a version-1 task record (old journals). The validators are the schema
// compiled ahead of time (lockfileSchema.generated.ts, scripts/compileSchemas.mjs), so
// reading a lockfile loads neither ajv's compiler nor compiles anything.

import type { ErrorObject, ValidateFunction } from "ajv";
import * as compiled from "./lockfileSchema.generated.js";

/** The parts of the schema data is checked against. */
export type LockSchemaPart = "header" | "taskLine" | "lockfileV1" | "task";

type Validators = Record<LockSchemaPart, ValidateFunction>;

// Two sets: fail-fast ones for the usual valid data (large lockfiles load faster), and
// ones collecting every error, used only to explain invalid data.
const validators = () => compiled as unknown as { fast: Validators; all: Validators };

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

/** The problems of `data` as the given schema part (at most `max`, most useful first), or [] when valid. */
export const lockSchemaProblems = (part: LockSchemaPart, data: unknown, max = 5): string[] => {
  const { fast, all } = validators();
  if (fast[part](data)) return [];
  all[part](data);
  const errors = all[part].errors ?? [];
  const lines = errors.slice(0, max).map(describe);
  if (errors.length > max) lines.push(`... and ${errors.length - max} more`);
  return lines;
};

/** The problems of `data` as a whole version-1 lockfile document, or [] when valid. */
export const lockFileProblems = (data: unknown, max = 5): string[] => lockSchemaProblems("lockfileV1", data, max);
