// Where results go when they do not go to a folder: an S3-compatible bucket and a prefix,
// written `s3://bucket/prefix`. Pure: telling a store URL from a folder, and the object
// key of a result's relative path (the same path it has in a local folder). Ground
// (src/README.md): the manifest (`item.file`), the plan and the engine tell a store from a
// folder by it, below the store itself (src/store/).

import { insideOrThrow } from "./insidePath.js";

/** A parsed `s3://bucket/prefix` (the prefix without slashes at either end, maybe empty). */
export interface StoreLocation {
  readonly url: string;
  readonly bucket: string;
  readonly prefix: string;
}

/** True for `s3://...`: the outputs are kept in object storage, not in a folder. */
export const isStoreUrl = (outputs: string): boolean => /^s3:\/\//i.test(outputs);

/** The bucket and prefix of `s3://bucket/prefix`, or a message saying what is wrong. */
export const parseStoreUrl = (url: string): StoreLocation | { readonly problem: string } => {
  const m = /^s3:\/\/([^/]*)(?:\/(.*))?$/i.exec(url);
  if (!m) return { problem: `not an object-store URL: ${JSON.stringify(url)} (write s3://bucket/prefix)` };
  const bucket = m[1] ?? "";
  // S3's bucket rules (3-63 characters of lower-case letters, digits, dots and hyphens);
  // R2, MinIO and GCS accept the same names.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    return { problem: `${JSON.stringify(url)}: the bucket name ${JSON.stringify(bucket)} is not valid (3-63 lower-case letters, digits, dots or hyphens)` };
  }
  const prefix = (m[2] ?? "").replace(/^\/+|\/+$/g, "");
  const segments = prefix === "" ? [] : prefix.split("/");
  if (segments.some((s) => s === "" || s === "." || s === "..") || /[\0\\]/.test(prefix)) {
    return { problem: `${JSON.stringify(url)}: the prefix must be plain names joined by "/" (no empty, "." or ".." parts)` };
  }
  return { url: `s3://${bucket}${prefix ? `/${prefix}` : ""}`, bucket, prefix };
};

/**
 * The object key of a result's relative path (`/`-separated, relative to the outputs).
 * Throws UnsafeOutputPath for a path that would climb out of the prefix (`..`, absolute):
 * a store keeps such keys as text, but file-backed stores (s3rver, MinIO in some modes)
 * and every local copy resolve them (fs/insidePath.ts, the one rule).
 */
export const objectKey = (location: StoreLocation, rel: string): string => {
  insideOrThrow(rel, location.url);
  return location.prefix ? `${location.prefix}/${rel}` : rel;
};

/** The relative path of a key listed under the prefix, or undefined for a key outside it. */
export const relativeKey = (location: StoreLocation, key: string): string | undefined => {
  if (!location.prefix) return key;
  return key.startsWith(`${location.prefix}/`) ? key.slice(location.prefix.length + 1) : undefined;
};
