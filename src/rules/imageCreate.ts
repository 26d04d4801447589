// The structural rules of B1 (create image task) as one pure function of the body:
// model name, prompt and its <<<image_N>>> / <<<element_N>>> labels, lists, enums and
// counts. Media contents are checked separately, see mediaRules.ts.

import { checkEnum, checkOptionalString, checkWatermark } from "./fieldChecks.js";
import type { RuleContext } from "./RuleContext.js";
import { DEFAULT_SERVICE, imageModelNames, suggestModel } from "./serviceNames.js";
import { codePointLength, describe, isRecord } from "./values.js";
import { violation, type Violation } from "./Violation.js";

export { imageModelNames };
export const IMAGE_PROMPT_MAX_CHARS = 2500;
export const IMAGE_RESOLUTIONS = ["1k", "2k", "4k"] as const;
export const IMAGE_RESULT_TYPES = ["single", "series"] as const;
export const IMAGE_ASPECT_RATIOS = ["16:9", "9:16", "1:1", "4:3", "3:4", "3:2", "2:3", "21:9", "auto"] as const;
export const IMAGE_N = { min: 1, max: 9, default: 1 } as const;
export const IMAGE_SERIES_AMOUNT = { min: 2, max: 9, default: 4 } as const;
/** image_list + element_list. */
export const IMAGE_REFERENCE_LIMIT = 10;

/** `<<<image_3>>>` is the 3rd entry of image_list, `<<<element_1>>>` the 1st of element_list. */
const LABEL = /<<<(image|element)_(\d+)>>>/g;

export function checkImageCreate(body: unknown, ctx: RuleContext = {}): Violation[] {
  const out: Violation[] = [];
  if (!isRecord(body)) {
    return [violation("body", "image.body.object", `must be a JSON object (got ${describe(body)})`)];
  }

  checkModelName(body["model_name"], ctx.service ?? DEFAULT_SERVICE, out);
  const images = checkImageList(body["image_list"], out);
  const elements = checkElementList(body["element_list"], ctx, out);
  checkPrompt(body["prompt"], images, elements, out);
  checkEnum(body["resolution"], "resolution", "image.resolution.enum", IMAGE_RESOLUTIONS, out);
  checkEnum(body["result_type"], "result_type", "image.result_type.enum", IMAGE_RESULT_TYPES, out);
  checkEnum(body["aspect_ratio"], "aspect_ratio", "image.aspect_ratio.enum", IMAGE_ASPECT_RATIOS, out);

  // n and series_amount are checked whether or not result_type makes them count: a
  // wrong value is a mistake either way, and checking it costs the user nothing.
  const n = body["n"];
  if (n !== undefined) {
    if (typeof n !== "number" || !Number.isInteger(n)) {
      out.push(violation("n", "image.n.type", `must be an integer (got ${describe(n)})`));
    } else if (n < IMAGE_N.min || n > IMAGE_N.max) {
      out.push(violation("n", "image.n.range", `must be from ${IMAGE_N.min} to ${IMAGE_N.max} (got ${n})`));
    }
  }
  const amount = body["series_amount"];
  if (amount !== undefined && amount !== "auto") {
    if (typeof amount !== "number" || !Number.isInteger(amount) || amount < IMAGE_SERIES_AMOUNT.min || amount > IMAGE_SERIES_AMOUNT.max) {
      out.push(
        violation(
          "series_amount",
          "image.series_amount.range",
          `must be an integer from ${IMAGE_SERIES_AMOUNT.min} to ${IMAGE_SERIES_AMOUNT.max} or "auto" (got ${describe(amount)})`,
        ),
      );
    }
  }

  if (images !== undefined && elements !== undefined && images + elements > IMAGE_REFERENCE_LIMIT) {
    out.push(
      violation(
        "image_list",
        "image.references.count",
        `reference images + elements must be at most ${IMAGE_REFERENCE_LIMIT} (got ${images} + ${elements})`,
      ),
    );
  }

  if (ctx.modelLimits !== false) checkModelLimits(body, images, ctx.service, out);

  checkWatermark(body["watermark_info"], "watermark_info", "image.watermark_info", out);
  checkOptionalString(body["callback_url"], "callback_url", "image.callback_url.type", out);
  checkOptionalString(body["external_task_id"], "external_task_id", "image.external_task_id.type", out);
  return out;
}

/** The model must be one of this service's: a name of another service's gets the suggestion of its own. */
function checkModelName(model: unknown, service: string, out: Violation[]): void {
  if (model === undefined) return;
  const known = imageModelNames(service);
  if (typeof model === "string" && known.includes(model)) return;
  const hint = typeof model === "string" ? suggestModel(model, known, service) : undefined;
  out.push(
    violation(
      "model_name",
      "image.model_name.enum",
      `must be one of ${known.join(", ")} (got ${describe(model)})${hint ? `: did you mean ${hint}?` : ""}`,
    ),
  );
}

/**
 * Per-model capabilities from the service's image documentation: kling-image-o1 takes no
 * 4k and no series; kling-v3-omni without reference images takes no aspect_ratio auto
 * (auto is also the default when aspect_ratio is left out).
 */
function checkModelLimits(body: Record<string, unknown>, images: number | undefined, service = DEFAULT_SERVICE, out: Violation[]): void {
  const [o1, v3] = imageModelNames(service) as [string, string];
  const model = body["model_name"] === undefined ? o1 : body["model_name"];
  if (model === o1) {
    if (body["resolution"] === "4k") {
      out.push(violation("resolution", "image.model.resolution", `${o1} does not take resolution 4k: use 1k or 2k, or model_name ${v3}`));
    }
    if (body["result_type"] === "series") {
      out.push(violation("result_type", "image.model.result_type", `${o1} does not take result_type series: use single, or model_name ${v3}`));
    }
  }
  if (model === v3 && images === 0) {
    const ratio = body["aspect_ratio"] ?? "auto";
    if (ratio === "auto") {
      out.push(
        violation(
          "aspect_ratio",
          "image.model.aspect_ratio",
          `${v3} without reference images does not take aspect_ratio auto (the default): give a ratio such as 16:9, or add a reference image`,
        ),
      );
    }
  }
}

/** Returns the list's length (0 when absent), or undefined when it is not a list. */
function checkImageList(list: unknown, out: Violation[]): number | undefined {
  if (list === undefined) return 0;
  if (!Array.isArray(list)) {
    out.push(violation("image_list", "image.image_list.type", `must be an array (got ${describe(list)})`));
    return undefined;
  }
  list.forEach((item: unknown, i) => {
    if (!isRecord(item)) {
      out.push(violation(`image_list[${i}]`, "image.image_list.item", `must be an object {image: string} (got ${describe(item)})`));
      return;
    }
    const image = item["image"];
    if (typeof image !== "string" || image.length === 0) {
      out.push(
        violation(
          `image_list[${i}].image`,
          "image.image_list.image.required",
          `is required: a non-empty image URL or base64 content (got ${describe(image)})`,
        ),
      );
    }
  });
  return list.length;
}

function checkElementList(list: unknown, ctx: RuleContext, out: Violation[]): number | undefined {
  if (list === undefined) return 0;
  if (!Array.isArray(list)) {
    out.push(violation("element_list", "image.element_list.type", `must be an array (got ${describe(list)})`));
    return undefined;
  }
  list.forEach((item: unknown, i) => {
    if (!isRecord(item)) {
      out.push(violation(`element_list[${i}]`, "image.element_list.item", `must be an object {element_id: integer} (got ${describe(item)})`));
      return;
    }
    const id = item["element_id"];
    // 64-bit ids: a bigint (parsed or built exactly) or a safe integer; a number past
    // 2^53 has already lost digits and would name another element.
    if (typeof id === "bigint" ? id < 0n : typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) {
      out.push(
        violation(
          `element_list[${i}].element_id`,
          "image.element_list.element_id.required",
          `is required: an integer element id from the library (got ${describe(id)})`,
        ),
      );
      return;
    }
    if (ctx.elements !== undefined && ctx.elements(String(id)) === undefined) {
      out.push(
        violation(`element_list[${i}].element_id`, "image.element.unknown", `element ${id} does not exist in the element library`, 1203),
      );
    }
  });
  return list.length;
}

function checkPrompt(prompt: unknown, images: number | undefined, elements: number | undefined, out: Violation[]): void {
  if (typeof prompt !== "string" || prompt.length === 0) {
    out.push(
      violation(
        "prompt",
        "image.prompt.required",
        prompt === undefined || prompt === "" ? "is required and must not be empty" : `must be a string (got ${describe(prompt)})`,
      ),
    );
    return;
  }
  const chars = codePointLength(prompt);
  if (chars > IMAGE_PROMPT_MAX_CHARS) {
    out.push(violation("prompt", "image.prompt.length", `must be at most ${IMAGE_PROMPT_MAX_CHARS} characters (got ${chars})`));
  }
  for (const match of prompt.includes("<<<") ? prompt.matchAll(LABEL) : []) {
    const kind = match[1] as "image" | "element";
    const n = Number(match[2]);
    const count = kind === "image" ? images : elements;
    if (count === undefined) continue; // the list itself is broken and already reported
    if (n < 1 || n > count) {
      out.push(
        violation(
          "prompt",
          `image.prompt.label.${kind}`,
          `label ${match[0]} points at no entry: ${kind}_list has ${count} ${count === 1 ? "entry" : "entries"} (labels count from 1)`,
        ),
      );
    }
  }
}
