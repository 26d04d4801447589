// The account's element library. Element management is not part of the spec, so the
// emulator starts with a small fixed library (replaceable from a JSON file) and the
// create rules check element ids against it.

import type { ElementInfo } from "../rules/index.js";

export interface ElementDefinition {
  /** A string of digits, as the service's ids are. */
  readonly id: string;
  readonly name: string;
  readonly element_type: "multi_image_elements" | "video_character_elements";
  readonly description?: string;
}

export const defaultElements: readonly ElementDefinition[] = [
  { id: "800000000001", name: "Mika", element_type: "multi_image_elements", description: "A red-haired courier in a yellow raincoat" },
  { id: "800000000002", name: "Rover", element_type: "multi_image_elements", description: "A small grey robot dog" },
  { id: "800000000003", name: "Lantern", element_type: "multi_image_elements", description: "A brass lantern with green glass" },
  { id: "800000000004", name: "Studio", element_type: "multi_image_elements", description: "A white photo studio with soft light" },
  { id: "800000000005", name: "Narrator", element_type: "video_character_elements", description: "A presenter filmed against a blue wall" },
];

/** Looks elements up by id for the rules (RuleContext.elements). */
export const elementLookup = (elements: readonly ElementDefinition[]): ((id: string) => ElementInfo | undefined) => {
  const byId = new Map(elements.map((e) => [e.id, e]));
  return (id) => {
    const e = byId.get(String(id));
    return e ? { id: e.id, name: e.name, element_type: e.element_type } : undefined;
  };
};
