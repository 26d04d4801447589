// A manifest after the schema check and compilation: jobs with their templates parsed,
// defaults applied, named inputs resolved and matrix axes loaded. Expansion works from
// this; every value keeps the place it came from.

import type { ElementInfo } from "../rules/index.js";
import type { Axis } from "./expandMatrix.js";
import type { Place } from "./Locator.js";
import type { Template } from "./Template.js";
import type { YamlPath } from "./YamlDocument.js";

/** One manifest value: a template (string) or a literal (number, boolean, enum text). */
export interface Value {
  readonly path: YamlPath;
  readonly template?: Template;
  readonly literal?: unknown;
}

export type InputRole =
  | "first_frame"
  | "last_frame"
  | "refer_image"
  | "feature_video"
  | "base_video"
  | "element"
  /** An image of an image job (image_list). */
  | "image";

export interface InputSpec {
  /** The name the prompt uses (`@name`, `<<<name>>>`); the item id on the video side. */
  readonly name?: string;
  readonly role: InputRole;
  /** Image or video source, for every role but element. */
  readonly src?: Value;
  /** Element library id, for role element. */
  readonly elementId?: string;
  readonly path: YamlPath;
}

export interface AxisSpec extends Axis {
  /** Where each value came from (inline list item or data file row). */
  readonly places: readonly Place[];
}

export interface JobSpec {
  readonly id: string;
  readonly kind: "video" | "image";
  readonly path: YamlPath;
  readonly prompt: Value;
  readonly inputs: readonly InputSpec[];
  /** Request fields by wire name: video `settings.*` (and `model`, the create path's segment), image top-level fields. Defaults applied. */
  readonly fields: ReadonlyMap<string, Value>;
  readonly watermark?: Value;
  readonly take: number;
  readonly retryFailed: number;
  readonly retryContentRisk: boolean;
  /** `review`: a person approves each output before downstream jobs use it. */
  readonly review?: true;
  /** `review: { retake_rejected: N }`: a task with a rejected output gets a new take, at most N per matrix combination (src/review/retake.ts). */
  readonly retakeRejected?: number;
  readonly output?: Value;
  /** File-name template of the task's results (`name`), without extension. */
  readonly name?: Value;
  readonly forEach?: { readonly job: string; readonly mode: "outputs" | "tasks"; readonly path: YamlPath };
  readonly axes: readonly AxisSpec[];
  /** Axes whose data file could not be read (reported there): their names stay known, their values are not. */
  readonly unreadAxes?: readonly string[];
  readonly include: readonly Record<string, unknown>[];
  readonly exclude: readonly Record<string, unknown>[];
}

export interface PricesSpec {
  readonly currency: string;
  readonly video?: Readonly<Record<string, number>>;
  readonly image?: Readonly<Record<string, number>>;
}

export interface ManifestSpec {
  readonly name: string;
  readonly outputs: string;
  readonly concurrency: number;
  readonly maxTasks: number;
  readonly budget?: { readonly max: string; readonly currency: string };
  readonly prices?: PricesSpec;
  readonly vars: Readonly<Record<string, unknown>>;
  /** Jobs in topological order (upstream first). */
  readonly jobs: readonly JobSpec[];
  /** Jobs with problems already reported: not expanded, so their problems are not repeated per task. */
  readonly invalidJobs: ReadonlySet<string>;
  /** Library lookup for the rules, when every element used has a known name and type. */
  readonly elements?: (id: string) => ElementInfo | undefined;
}
