// Logic-less `{{ path.to.value }}` templates: parsed once per manifest string, filled
// per task by looking names up; values are inserted as text and nothing is evaluated.

export interface TemplateRef {
  /** e.g. ["product", "photo"], ["item", "outputs", "0", "url"]. */
  readonly path: readonly string[];
  /** Offset of `{{` within the template text. */
  readonly offset: number;
}

export interface Template {
  readonly text: string;
  /** Literal text and references, in order. A template without `{{` is one literal. */
  readonly parts: readonly (string | TemplateRef)[];
}

export interface TemplateError {
  readonly offset: number;
  readonly message: string;
}

const PATH = /^[A-Za-z_][A-Za-z0-9_-]*(\.([A-Za-z0-9_-]+))*$/;

export const hasTemplate = (text: string): boolean => text.includes("{{");

export const parseTemplate = (text: string): Template | TemplateError => {
  if (!text.includes("{{")) return { text, parts: [text] };
  const parts: (string | TemplateRef)[] = [];
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf("{{", i);
    if (open < 0) {
      parts.push(text.slice(i));
      break;
    }
    if (open > i) parts.push(text.slice(i, open));
    const close = text.indexOf("}}", open + 2);
    if (close < 0) return { offset: open, message: "unclosed template: '{{' without a matching '}}'" };
    const inner = text.slice(open + 2, close).trim();
    if (!PATH.test(inner)) {
      return {
        offset: open,
        message: `invalid template '${text.slice(open, close + 2)}': only a name or a dotted path is allowed, e.g. {{ product.name }}`,
      };
    }
    parts.push({ path: inner.split("."), offset: open });
    i = close + 2;
  }
  return { text, parts };
};

export const isTemplateError = (t: Template | TemplateError): t is TemplateError => "message" in t;

/** Resolves the first segment of a path; undefined when the name is unknown. */
export type Scope = (name: string) => unknown;

export interface RenderProblem {
  readonly offset: number;
  readonly message: string;
  /** The reference's path, e.g. ["item", "vars", "style"]. */
  readonly path: readonly string[];
}

/** On failure: the first problem (offset, message) and every problem in the template, in order. */
export type RenderResult =
  | { ok: true; value: string }
  | { ok: false; offset: number; message: string; problems: readonly RenderProblem[] };

const describeKeys = (value: object): string => {
  const keys = Object.keys(value);
  return keys.length ? `; it has: ${keys.slice(0, 12).join(", ")}${keys.length > 12 ? ", ..." : ""}` : "";
};

/** Looks a path up: the value, or why it cannot be found. */
export const lookup = (
  path: readonly string[],
  scope: Scope,
  names: () => readonly string[],
): { ok: true; value: unknown } | { ok: false; message: string } => {
  let value = scope(path[0]!);
  if (value === undefined) {
    const known = names();
    return {
      ok: false,
      message: `unknown name '${path[0]}' in template${known.length ? `; known names: ${known.join(", ")}` : ""}`,
    };
  }
  for (let i = 1; i < path.length; i++) {
    const seg = path[i]!;
    const parentPath = path.slice(0, i).join(".");
    if (value === null || typeof value !== "object") {
      return { ok: false, message: `'${parentPath}' is a plain value and has no field '${seg}'` };
    }
    const next: unknown = Array.isArray(value) ? value[Number(seg)] : (value as Record<string, unknown>)[seg];
    if (next === undefined) {
      return {
        ok: false,
        message: Array.isArray(value)
          ? `'${parentPath}' has ${value.length} item(s); no index ${seg}`
          : `'${parentPath}' has no field '${seg}'${describeKeys(value)}`,
      };
    }
    value = next;
  }
  return { ok: true, value };
};

export const render = (template: Template, scope: Scope, names: () => readonly string[]): RenderResult => {
  const { parts } = template;
  if (parts.length === 1 && typeof parts[0] === "string") return { ok: true, value: parts[0] };
  let out = "";
  const problems: RenderProblem[] = [];
  for (const part of parts) {
    if (typeof part === "string") {
      out += part;
      continue;
    }
    const found = lookup(part.path, scope, names);
    if (!found.ok) {
      problems.push({ offset: part.offset, message: found.message, path: part.path });
      continue;
    }
    const v = found.value;
    if (v !== null && typeof v === "object") {
      problems.push({
        offset: part.offset,
        path: part.path,
        message: `'${part.path.join(".")}' is ${Array.isArray(v) ? "a list" : "a row of fields"}, not text: name one of its fields${Array.isArray(v) ? "" : describeKeys(v)}`,
      });
      continue;
    }
    out += v === null ? "" : String(v);
  }
  if (problems.length) return { ok: false, offset: problems[0]!.offset, message: problems[0]!.message, problems };
  return { ok: true, value: out };
};
