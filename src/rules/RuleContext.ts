// What the rules need to know beyond the request body: the service's name (part of
// model identifiers) and the element library. Both are optional so preflight can run
// the structural rules without knowing the account's elements.

export interface ElementInfo {
  readonly id: string;
  readonly name: string;
  readonly element_type: "multi_image_elements" | "video_character_elements";
}

export interface RuleContext {
  /** The service's own name (`svc` in the spec, `kling` for the real service); used in model names. Default "kling". */
  readonly service?: string;
  /**
   * Looks an element up by its id. When absent, element existence, type and name rules
   * are skipped (the caller cannot know the library); when present, an unknown id is a
   * 1203 violation.
   */
  readonly elements?: (id: string) => ElementInfo | undefined;
  /**
   * Check the per-model capability limits (kling-image-o1: no 4k, no series; kling-v3-omni
   * without reference images: no aspect_ratio auto). Default true; the emulator can turn
   * it off to act as a service that falls back silently.
   */
  readonly modelLimits?: boolean;
}
