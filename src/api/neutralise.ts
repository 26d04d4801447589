// Making untrusted text safe to store and print: the API key scrubbed out of anything
// the service says (a failure message or a URL may echo it), and control characters,
// terminal escape sequences and bidirectional overrides rendered inert and visible, from
// the service or from data files alike. Pure string functions; the client applies them
// to every string of every answer, reports and the terminal call `neutralise` on text
// that did not come through the client (data files, manifests).

/** What stands in for a scrubbed secret. */
export const redactedMark = "[redacted]";

/**
 * C0 controls, DEL, C1 controls (incl. the 8-bit CSI), line/paragraph separators, and
 * the bidirectional controls (embedding, override, isolate, marks) that reorder text on screen.
 */
const unsafe = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escapeOf = (ch: string): string => {
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
};

/**
 * `text` with every control character shown as an escape (`\x1b`, `\u202e`): an escape
 * sequence becomes inert printable text, so it can neither restyle the terminal, move the
 * cursor, set the window title, nor fake a line of output. Tabs, line feeds and carriage
 * returns become a single space. Text without such characters is returned as is.
 */
export const neutralise = (text: string): string => {
  unsafe.lastIndex = 0;
  if (!unsafe.test(text)) return text;
  unsafe.lastIndex = 0;
  return text.replace(unsafe, (ch) => (ch === "\t" || ch === "\n" || ch === "\r" ? " " : escapeOf(ch)));
};

/** `text` without any occurrence of `secret` (also in its URL-encoded form). Secrets shorter than 4 characters are left alone. */
export const scrubSecret = (text: string, secret: string): string => {
  if (secret.length < 4) return text;
  let out = text.includes(secret) ? text.split(secret).join(redactedMark) : text;
  const encoded = encodeURIComponent(secret);
  if (encoded !== secret && out.includes(encoded)) out = out.split(encoded).join(redactedMark);
  return out;
};

/** The cleaner of service text for one key: scrubbed of the key, then neutralised. */
export const serviceTextCleaner = (secret: string) => (text: string): string => neutralise(scrubSecret(text, secret));

/**
 * A copy of parsed JSON with `clean` applied to every string (object keys included);
 * the same value when nothing changed, so clean answers cost no copying.
 */
export const cleanStrings = (value: unknown, clean: (text: string) => string): unknown => {
  if (typeof value === "string") return clean(value);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = cleanStrings(value[i], clean);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return out ?? value;
  }
  if (typeof value === "object" && value !== null) {
    // Copied only from the first member that changed (every answer passes here: a clean
    // one, the usual case, allocates nothing).
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const ck = clean(k);
      const cv = cleanStrings(record[k], clean);
      if (ck === k && cv === record[k]) continue;
      // Object.fromEntries: a "__proto__" key stays an own member (an assignment would set the prototype).
      const entries: [string, unknown][] = keys.slice(0, i).map((key) => [key, record[key]]);
      entries.push([ck, cv]);
      for (let j = i + 1; j < keys.length; j++) entries.push([clean(keys[j]!), cleanStrings(record[keys[j]!], clean)]);
      return Object.fromEntries(entries);
    }
    return value;
  }
  return value;
};
