// The JSON Schemas of the service's answers (schemas/api/, shipped with the package),
// compiled once. Checking an answer gives the list of what is wrong with it, by path,
// so a changed or broken service shows up as a readable DecodeError, not a crash later.

import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { Operation } from "./ApiError.js";

const schemaDir = new URL("../../schemas/api/", import.meta.url);

/** The answer schema of each operation that answers with an envelope. */
export const answerSchemaFile: Record<Exclude<Operation, "download">, string> = {
  createVideo: "video-create.answer.schema.json",
  queryVideos: "video-query.answer.schema.json",
  cursorVideos: "video-cursor.answer.schema.json",
  createImage: "image-create.answer.schema.json",
  getImage: "image-get.answer.schema.json",
  listImages: "image-list.answer.schema.json",
};

const sharedFiles = ["defs.schema.json", "envelope.schema.json"];

const readSchema = (file: string): object => JSON.parse(readFileSync(new URL(file, schemaDir), "utf8")) as object;

/** A short rendering of the offending value, so the reader sees what came instead. */
const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

const describe = (error: ErrorObject): string => {
  const where = error.instancePath === "" ? "(answer)" : error.instancePath;
  const got = typeof error.data === "object" && error.data !== null ? "" : ` (got ${shown(error.data)})`;
  switch (error.keyword) {
    case "enum":
      return `${where}: must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(", ")}${got}`;
    case "const":
      return `${where}: must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}${got}`;
    case "required":
      return `${where}: missing '${(error.params as { missingProperty: string }).missingProperty}'`;
    case "anyOf":
      return `${where}: matches none of the allowed shapes`;
    default:
      return `${where}: ${error.message ?? error.keyword}${got}`;
  }
};

/** ajv reports a failed if/then and anyOf as a wrapper error besides the real ones. */
const isWrapper = (error: ErrorObject): boolean => error.keyword === "if" || error.keyword === "allOf";

export interface AnswerSchemas {
  /** What is wrong with `answer` as `operation`'s success answer (at most `max` lines); [] when it conforms. */
  readonly problems: (operation: Exclude<Operation, "download">, answer: unknown, max?: number) => string[];
  /** What is wrong with `answer` as an envelope (code, message, request_id); [] when it conforms. */
  readonly envelopeProblems: (answer: unknown) => string[];
  /** What is wrong with one task item (A2/A3 item, B2/B3 task); [] when it conforms. */
  readonly taskProblems: (shape: TaskShape, item: unknown, max?: number) => string[];
}

/** The two task item shapes of the wire format. */
export type TaskShape = "videoTask" | "imageTask";

/**
 * Reads the answer schemas; each operation's validator is compiled on first use, and
 * shared by every client of the process (compiling costs a noticeable fraction of a
 * second). `checkSchemas` also checks the schemas against the JSON Schema meta-schema
 * (the tests do; at run time the shipped schemas are trusted).
 */
export const loadAnswerSchemas = (opts: { readonly checkSchemas?: boolean } = {}): AnswerSchemas => {
  if (!opts.checkSchemas && shared !== undefined) return shared;
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictRequired: false,
    verbose: true,
    // Shared definitions compiled once, not inlined into each operation's validator.
    inlineRefs: false,
    validateSchema: opts.checkSchemas === true,
  });
  for (const file of sharedFiles) ajv.addSchema(readSchema(file));
  const validators = new Map<string, ValidateFunction>();
  const validatorOf = (operation: Exclude<Operation, "download">): ValidateFunction => {
    let validate = validators.get(operation);
    if (validate === undefined) {
      validate = ajv.compile(readSchema(answerSchemaFile[operation]));
      validators.set(operation, validate);
    }
    return validate;
  };
  if (opts.checkSchemas) for (const operation of Object.keys(answerSchemaFile)) validatorOf(operation as Exclude<Operation, "download">);

  const report = (validate: ValidateFunction, answer: unknown, max: number): string[] => {
    if (validate(answer)) return [];
    const errors = (validate.errors ?? []).filter((e) => !isWrapper(e));
    const lines = [...new Set(errors.map(describe))];
    return lines.length > max ? [...lines.slice(0, max), `... and ${lines.length - max} more`] : lines;
  };

  const itemValidators = new Map<TaskShape, ValidateFunction>();
  const itemValidatorOf = (shape: TaskShape): ValidateFunction => {
    let validate = itemValidators.get(shape);
    if (validate === undefined) {
      validate = ajv.compile({ $id: `https://omnibatch.local/schemas/api/item-${shape}.schema.json`, $ref: `defs.schema.json#/$defs/${shape}` });
      itemValidators.set(shape, validate);
    }
    return validate;
  };

  const schemas: AnswerSchemas = {
    problems: (operation, answer, max = 8) => report(validatorOf(operation), answer, max),
    taskProblems: (shape, item, max = 8) => report(itemValidatorOf(shape), item, max),
    envelopeProblems: (answer) => report(ajv.getSchema("https://omnibatch.local/schemas/api/envelope.schema.json")!, answer, 8),
  };
  if (!opts.checkSchemas) shared = schemas;
  return schemas;
};

let shared: AnswerSchemas | undefined;
