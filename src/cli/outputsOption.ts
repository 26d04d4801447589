// `--outputs DIR|URL`: where results go, overriding the manifest's `outputs`, so one
// manifest serves a laptop (a folder) and CI (a bucket). Shared by run, plan, status,
// report and pull; the value is checked here, before anything else happens.

import { resolve } from "node:path";
import type { OptionSpec } from "./Command.js";
import { UsageError } from "./UsageError.js";

export const outputsOption = {
  type: "string",
  value: "DIR|URL",
  description: "Where the results are, instead of the manifest's outputs: a folder, or s3://bucket/prefix (an S3-compatible store).",
} as const satisfies OptionSpec;

const storeUrl = /^s3:\/\//i;

/** The manifest (or its locations) with `--outputs` applied; a folder is taken relative to the current folder. */
export const withOutputs = <M extends { readonly outputsDir: string }>(
  manifest: M,
  values: Readonly<Record<string, unknown>>,
  cwd: string,
  command: string,
): M => {
  const value = values["outputs"];
  if (typeof value !== "string") return manifest;
  if (value.trim() === "") throw new UsageError({ command, message: "--outputs needs a folder or an s3://bucket/prefix URL" });
  if (storeUrl.test(value)) {
    const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/.*)?$/.exec(value);
    if (!m) throw new UsageError({ command, message: `--outputs '${value}': write s3://bucket/prefix (a bucket name of 3-63 lower-case letters, digits, dots or hyphens)` });
    return { ...manifest, outputsDir: value.replace(/\/+$/, "") };
  }
  return { ...manifest, outputsDir: resolve(cwd, value) };
};
