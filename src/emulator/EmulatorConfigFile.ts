// Reading emulator settings from JSON files (--config, --elements). A file that
// cannot be read or parsed is an EmulatorConfigInvalid naming the file, never a stack.

import { readFile } from "node:fs/promises";
import type { DeepPartial, EmulatorConfig } from "./EmulatorConfig.js";
import { configInvalid } from "./EmulatorConfigInvalid.js";
import type { ElementDefinition } from "./ElementLibrary.js";

const readJsonFile = async (path: string, what: string): Promise<unknown> => {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    throw configInvalid(path, [`cannot read the ${what} file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw configInvalid(path, [`the ${what} file is not valid JSON: ${(e as Error).message}`]);
  }
};

/** A JSON object of emulator settings (any subset of EmulatorConfig). */
export const loadConfigFile = async (path: string): Promise<DeepPartial<EmulatorConfig>> => {
  const value = await readJsonFile(path, "config");
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw configInvalid(path, ["the config file must hold a JSON object of settings"]);
  }
  return value as DeepPartial<EmulatorConfig>;
};

/** A JSON array of elements, or an object with an `elements` array. Checked with the rest of the config. */
export const loadElementsFile = async (path: string): Promise<ElementDefinition[]> => {
  const value = await readJsonFile(path, "elements");
  const list = Array.isArray(value) ? value : (value as { elements?: unknown } | null)?.elements;
  if (!Array.isArray(list)) throw configInvalid(path, ["the elements file must hold an array of {id, name, element_type}"]);
  return list as ElementDefinition[];
};
