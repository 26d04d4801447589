// The structural rules of A1 (create video task) as one pure function of the body:
// types, enums, ranges, combinations of inputs, prompt references and elements.
// Media contents (pixels, durations) are checked separately, see mediaRules.ts.

import { checkEnum, checkOptionalString, checkWatermark } from "./fieldChecks.js";
import { codePointLength, describe, isRecord } from "./values.js";
import type { ElementInfo, RuleContext } from "./RuleContext.js";
import { violation, type Violation } from "./Violation.js";

export const VIDEO_CONTENT_TYPES = [
  "prompt",
  "first_frame",
  "last_frame",
  "refer_image",
  "feature_video",
  "base_video",
  "element",
] as const;
export const VIDEO_AUDIO = ["original", "off"] as const;
export const VIDEO_RESOLUTIONS = ["720p", "1080p"] as const;
export const VIDEO_ASPECT_RATIOS = ["16:9", "9:16", "1:1"] as const;
export const VIDEO_DURATION = { min: 3, max: 10, default: 5, firstFrameOnly: [5, 10] } as const;
export const PROMPT_MAX_CHARS = 2500;
/** Reference images + elements: at most 7, or 4 when a reference video is present. */
export const VIDEO_REFERENCE_LIMIT = { withoutVideo: 7, withVideo: 4 } as const;

type ContentType = (typeof VIDEO_CONTENT_TYPES)[number];

interface Item {
  readonly index: number;
  readonly type: ContentType;
  readonly id?: string;
  readonly text?: string;
  readonly elementId?: string;
}

export function checkVideoCreate(body: unknown, ctx: RuleContext = {}): Violation[] {
  const out: Violation[] = [];
  if (!isRecord(body)) {
    return [violation("body", "video.body.object", `must be a JSON object (got ${describe(body)})`)];
  }
  const items = checkContents(body["contents"], out);
  const settings = checkSettings(body["settings"], out);
  checkOptions(body["options"], out);
  if (items !== undefined) {
    checkCombinations(items, settings, out);
    checkIds(items, out);
    checkElements(items, ctx, out);
  }
  return out;
}

// ---------------------------------------------------------------- contents

function checkContents(contents: unknown, out: Violation[]): Item[] | undefined {
  if (contents === undefined) {
    out.push(violation("contents", "video.contents.required", "is required"));
    return undefined;
  }
  if (!Array.isArray(contents)) {
    out.push(violation("contents", "video.contents.type", `must be an array (got ${describe(contents)})`));
    return undefined;
  }
  if (contents.length === 0) {
    out.push(violation("contents", "video.contents.empty", "must hold at least one input"));
    return undefined;
  }
  const items: Item[] = [];
  contents.forEach((raw: unknown, index) => {
    const at = `contents[${index}]`;
    if (!isRecord(raw)) {
      out.push(violation(at, "video.content.object", `must be an object (got ${describe(raw)})`));
      return;
    }
    const type = raw["type"];
    if (typeof type !== "string" || !(VIDEO_CONTENT_TYPES as readonly string[]).includes(type)) {
      out.push(
        violation(
          `${at}.type`,
          "video.content.type",
          type === undefined
            ? `is required, one of ${VIDEO_CONTENT_TYPES.join(", ")}`
            : `must be one of ${VIDEO_CONTENT_TYPES.join(", ")} (got ${describe(type)})`,
        ),
      );
      return;
    }
    const item = checkItem(raw, type as ContentType, index, out);
    if (item !== undefined) items.push(item);
  });
  return items;
}

function checkItem(raw: Record<string, unknown>, type: ContentType, index: number, out: Violation[]): Item | undefined {
  const at = `contents[${index}]`;
  if (type === "prompt") {
    const text = raw["text"];
    if (typeof text !== "string" || text.length === 0) {
      out.push(
        violation(
          `${at}.text`,
          "video.prompt.text.required",
          text === undefined || text === "" ? "is required: a prompt item needs a non-empty text" : `must be a string (got ${describe(text)})`,
        ),
      );
      return { index, type };
    }
    const chars = codePointLength(text);
    if (chars > PROMPT_MAX_CHARS) {
      out.push(
        violation(
          `${at}.text`,
          "video.prompt.length",
          `must be at most ${PROMPT_MAX_CHARS} characters (got ${chars})`,
        ),
      );
    }
    return { index, type, text };
  }

  let id: string | undefined;
  const rawId = raw["id"];
  if (rawId !== undefined) {
    if (typeof rawId !== "string" || rawId.length === 0) {
      out.push(violation(`${at}.id`, "video.content.id.type", `must be a non-empty string (got ${describe(rawId)})`));
    } else {
      id = rawId;
    }
  }

  if (type === "element") {
    const elementId = raw["element_id"];
    if (typeof elementId !== "string" || elementId.length === 0) {
      out.push(
        violation(
          `${at}.element_id`,
          "video.element.element_id.required",
          elementId === undefined ? "is required: the id of an element from the library" : `must be a non-empty string (got ${describe(elementId)})`,
        ),
      );
    }
    if (rawId === undefined) {
      out.push(violation(`${at}.id`, "video.element.id.required", "is required on an element item (the prompt refers to it as @id)"));
    }
    return {
      index,
      type,
      ...(id !== undefined ? { id } : {}),
      ...(typeof elementId === "string" && elementId !== "" ? { elementId } : {}),
    };
  }

  const url = raw["url"];
  if (typeof url !== "string" || url.length === 0) {
    out.push(
      violation(
        `${at}.url`,
        "video.content.url.required",
        url === undefined || url === ""
          ? `is required on a ${type} item: a ${type.endsWith("video") ? "video URL" : "image URL or base64 content"}`
          : `must be a string (got ${describe(url)})`,
      ),
    );
  }
  return { index, type, ...(id !== undefined ? { id } : {}) };
}

// ---------------------------------------------------------------- settings, options

interface Settings {
  readonly aspectRatioGiven: boolean;
  /** The duration to judge combinations with: the given valid one, or the default. */
  readonly duration: number | undefined;
  readonly durationGiven: boolean;
}

function checkSettings(settings: unknown, out: Violation[]): Settings {
  const none: Settings = { aspectRatioGiven: false, duration: VIDEO_DURATION.default, durationGiven: false };
  if (settings === undefined) return none;
  if (!isRecord(settings)) {
    out.push(violation("settings", "video.settings.object", `must be an object (got ${describe(settings)})`));
    return none;
  }
  checkEnum(settings["audio"], "settings.audio", "video.audio.enum", VIDEO_AUDIO, out);
  checkEnum(settings["resolution"], "settings.resolution", "video.resolution.enum", VIDEO_RESOLUTIONS, out);
  checkEnum(settings["aspect_ratio"], "settings.aspect_ratio", "video.aspect_ratio.enum", VIDEO_ASPECT_RATIOS, out);

  const duration = settings["duration"];
  let judged: number | undefined = VIDEO_DURATION.default;
  if (duration !== undefined) {
    if (typeof duration !== "number" || !Number.isInteger(duration)) {
      out.push(violation("settings.duration", "video.duration.type", `must be an integer number of seconds (got ${describe(duration)})`));
      judged = undefined;
    } else if (duration < VIDEO_DURATION.min || duration > VIDEO_DURATION.max) {
      out.push(
        violation(
          "settings.duration",
          "video.duration.range",
          `must be from ${VIDEO_DURATION.min} to ${VIDEO_DURATION.max} seconds (got ${duration})`,
        ),
      );
      judged = undefined;
    } else {
      judged = duration;
    }
  }
  return {
    aspectRatioGiven: settings["aspect_ratio"] !== undefined,
    duration: judged,
    durationGiven: duration !== undefined,
  };
}

function checkOptions(options: unknown, out: Violation[]): void {
  if (options === undefined) return;
  if (!isRecord(options)) {
    out.push(violation("options", "video.options.object", `must be an object (got ${describe(options)})`));
    return;
  }
  checkOptionalString(options["callback_url"], "options.callback_url", "video.callback_url.type", out);
  checkOptionalString(options["external_task_id"], "options.external_task_id", "video.external_task_id.type", out);
  checkWatermark(options["watermark_info"], "options.watermark_info", "video.watermark_info", out);
}

// ---------------------------------------------------------------- combinations

function checkCombinations(items: readonly Item[], settings: Settings, out: Violation[]): void {
  const of = (type: ContentType) => items.filter((i) => i.type === type);
  const prompts = of("prompt");
  const firsts = of("first_frame");
  const lasts = of("last_frame");
  const refers = of("refer_image");
  const features = of("feature_video");
  const bases = of("base_video");
  const elements = of("element");
  const videos = [...features, ...bases];
  const field = (i: Item) => `contents[${i.index}]`;

  if (prompts.length > 1) {
    out.push(violation(field(prompts[1]!), "video.prompt.multiple", `at most one prompt item per task (got ${prompts.length})`));
  }
  if (firsts.length > 1) {
    out.push(violation(field(firsts[1]!), "video.first_frame.multiple", `at most one first_frame per task (got ${firsts.length})`));
  }
  if (lasts.length > 1) {
    out.push(violation(field(lasts[1]!), "video.last_frame.multiple", `at most one last_frame per task (got ${lasts.length})`));
  }
  if (lasts.length > 0 && firsts.length === 0) {
    out.push(violation(field(lasts[0]!), "video.last_frame.alone", "a last frame alone is unsupported: add a first_frame"));
  }
  if (firsts.length > 0 && lasts.length > 0 && refers.length + elements.length > 0) {
    const extra = [...refers, ...elements].sort((a, b) => a.index - b.index)[0]!;
    out.push(
      violation(
        field(extra),
        "video.frames.with_references",
        "with both a first and a last frame, no refer_image or element may be added",
      ),
    );
  }
  if (videos.length > 1) {
    const second = [...videos].sort((a, b) => a.index - b.index)[1]!;
    out.push(violation(field(second), "video.reference_video.multiple", `at most one reference video (feature_video or base_video) per task (got ${videos.length})`));
  }
  if (features.length > 0 && lasts.length > 0) {
    out.push(violation(field(lasts[0]!), "video.feature_video.last_frame", "with a feature_video only the first frame can be defined, not a last_frame"));
  }
  if (bases.length > 0) {
    for (const frame of [...firsts, ...lasts]) {
      out.push(violation(field(frame), "video.base_video.frames", `with a base_video neither a first nor a last frame can be defined (got ${frame.type})`));
    }
  }
  const references = refers.length + elements.length;
  const limit = videos.length > 0 ? VIDEO_REFERENCE_LIMIT.withVideo : VIDEO_REFERENCE_LIMIT.withoutVideo;
  if (references > limit) {
    out.push(
      violation(
        "contents",
        "video.references.count",
        `reference images + elements must be at most ${limit}${videos.length > 0 ? " with a reference video" : ""} (got ${references})`,
      ),
    );
  }

  if (!settings.aspectRatioGiven && firsts.length === 0 && videos.length === 0) {
    out.push(
      violation(
        "settings.aspect_ratio",
        "video.aspect_ratio.required",
        `is required when there is neither a first frame nor a reference video (one of ${VIDEO_ASPECT_RATIOS.join(", ")})`,
      ),
    );
  }

  // Elements are not image inputs in the spec's wording (its image input rules list
  // first_frame, last_frame and refer_image only), so they do not lift this rule.
  const firstFrameOnly = firsts.length > 0 && lasts.length === 0 && refers.length === 0 && videos.length === 0;
  const d = settings.duration;
  if (firstFrameOnly && d !== undefined && !(VIDEO_DURATION.firstFrameOnly as readonly number[]).includes(d)) {
    out.push(
      violation(
        "settings.duration",
        "video.duration.first_frame_only",
        `must be 5 or 10 when a first frame is the only image input (got ${d})`,
      ),
    );
  }
}

// ---------------------------------------------------------------- ids and references

function checkIds(items: readonly Item[], out: Violation[]): void {
  const seen = new Map<string, number>();
  for (const item of items) {
    if (item.id === undefined) continue;
    const first = seen.get(item.id);
    if (first !== undefined) {
      out.push(
        violation(
          `contents[${item.index}].id`,
          "video.content.id.duplicate",
          `must be unique within the task ("${item.id}" is also used by contents[${first}])`,
        ),
      );
    } else {
      seen.set(item.id, item.index);
    }
  }

  const prompt = items.find((i) => i.type === "prompt" && i.text !== undefined);
  if (prompt?.text === undefined) return;
  const text = prompt.text;
  const ids = [...seen.keys()];
  // `@ab` also reads as `@a` followed by "b": when one id is inside another, a
  // reference to either of them is ambiguous.
  for (const a of ids) {
    for (const b of ids) {
      if (a === b || !b.includes(a)) continue;
      if (text.includes(`@${a}`) || text.includes(`@${b}`)) {
        out.push(
          violation(
            `contents[${prompt.index}].text`,
            "video.prompt.reference.ambiguous",
            `refers to ids that are substrings of one another ("${a}" is inside "${b}"): rename one of them`,
          ),
        );
      }
    }
  }
}

function checkElements(items: readonly Item[], ctx: RuleContext, out: Violation[]): void {
  if (ctx.elements === undefined) return;
  const used: Array<{ item: Item; info: ElementInfo }> = [];
  for (const item of items) {
    if (item.type !== "element" || item.elementId === undefined) continue;
    const info = ctx.elements(item.elementId);
    const at = `contents[${item.index}].element_id`;
    if (info === undefined) {
      out.push(violation(at, "video.element.unknown", `element "${item.elementId}" does not exist in the element library`, 1203));
      continue;
    }
    if (info.element_type !== "multi_image_elements") {
      out.push(
        violation(
          at,
          "video.element.video_type",
          `element "${item.elementId}" is a ${info.element_type}; only multi_image_elements are supported`,
        ),
      );
    }
    used.push({ item, info });
  }

  for (const a of used) {
    for (const b of used) {
      if (a === b || a.info.id === b.info.id || a.info.name === "" || !b.info.name.includes(a.info.name)) continue;
      // Equal names are reported once, from the earlier item.
      if (a.info.name === b.info.name && a.item.index > b.item.index) continue;
      out.push(
        violation(
          `contents[${b.item.index}].element_id`,
          "video.element.name.substring",
          `element names must not be substrings of one another ("${a.info.name}" of contents[${a.item.index}] is inside "${b.info.name}")`,
        ),
      );
    }
  }

  const prompt = items.find((i) => i.type === "prompt" && i.text !== undefined);
  if (prompt?.text === undefined) return;
  // The prompt refers to items as @id; what is left must not contain an element's name.
  const ids = items.flatMap((i) => (i.id === undefined ? [] : [i.id])).sort((x, y) => y.length - x.length);
  let rest = prompt.text;
  for (const id of ids) rest = rest.split(`@${id}`).join("\u0000");
  const reported = new Set<string>();
  for (const { item, info } of used) {
    if (info.name === "" || reported.has(info.name) || !rest.includes(info.name)) continue;
    reported.add(info.name);
    out.push(
      violation(
        `contents[${prompt.index}].text`,
        "video.element.name.in_prompt",
        `element name "${info.name}" (contents[${item.index}]) also occurs in other prompt text; element names must not coincide with other text`,
      ),
    );
  }
}
