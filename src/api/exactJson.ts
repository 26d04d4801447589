// JSON with integers beyond 2^53 kept exact. The service's element ids are 64-bit
// (its own example is 829836802793406551): a JavaScript number would round them, so
// they travel as bigint in requests and are written as plain JSON integers, and the
// emulator reads such literals back as bigint. Safe integers stay numbers.

import { randomBytes } from "node:crypto";

/** An element id (digits) as the request carries it: a number when exact, else a bigint. */
export const exactInteger = (digits: string): number | bigint => {
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : BigInt(digits);
};

/** JSON.stringify, with every bigint written as a plain JSON integer (never quoted, never rounded). */
export const stringifyExact = (value: unknown): string => {
  let mark: string | undefined;
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== "bigint") return v;
    mark ??= `bigint-${randomBytes(8).toString("hex")}:`;
    return `${mark}${v.toString()}`;
  });
  if (mark === undefined) return text;
  return text.replace(new RegExp(`"${mark}(-?\\d+)"`, "g"), "$1");
};

/** A quick test whether a JSON text may hold an integer literal too long to be exact. */
const mayHoldLongInteger = /\d{16}/;

/**
 * JSON.parse, with integer literals that a number cannot hold exactly (above 2^53)
 * read as bigint. Strings are left as they are; only literals outside strings count.
 */
export const parseExact = (text: string): unknown => {
  if (!mayHoldLongInteger.test(text)) return JSON.parse(text);
  const mark = `bigint-${randomBytes(8).toString("hex")}:`;
  let out = "";
  let last = 0;
  let inString = false;
  let found = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < text.length && /[0-9eE.+-]/.test(text[j]!)) j++;
      const token = text.slice(i, j);
      if (/^-?\d+$/.test(token) && !Number.isSafeInteger(Number(token))) {
        out += `${text.slice(last, i)}"${mark}${token}"`;
        last = j;
        found = true;
      }
      i = j - 1;
    }
  }
  if (!found) return JSON.parse(text);
  out += text.slice(last);
  return JSON.parse(out, (_key, v: unknown) => (typeof v === "string" && v.startsWith(mark) ? BigInt(v.slice(mark.length)) : v));
};
