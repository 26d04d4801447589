// A manifest built by hand for engine tests: plain video and image tasks with valid
// requests, a downstream video job fed by image outputs, and retry attempts, without
// going through YAML (the manifest module has its own tests).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunnableManifest } from "../../src/engine/RunnableManifest.js";
import type { PlannedImageTask, PlannedTask, PlannedVideoTask, UpstreamItem } from "../../src/manifest/PlannedTask.js";

export interface TestTaskSpec {
  readonly job: string;
  readonly kind: "video" | "image";
  readonly prompt: string;
  readonly n?: number;
  readonly watermark?: boolean;
  readonly estimate?: string;
}

export interface TestManifestOptions {
  readonly name?: string;
  readonly concurrency?: number;
  readonly budget?: { max: string; currency: string };
  readonly tasks: readonly TestTaskSpec[];
  /** A downstream video job (`clips`) fed by every output of this image job. */
  readonly downstreamOf?: string;
  readonly retryFailed?: number;
  readonly retryContentRisk?: boolean;
}

const source = { file: "test.yaml", line: 1, col: 1 };

const withId = (task: PlannedTask, id: string): PlannedTask =>
  task.kind === "video"
    ? ({ ...task, id, request: { ...task.request, options: { ...task.request.options, external_task_id: id } } } as PlannedVideoTask)
    : ({ ...task, id, request: { ...task.request, external_task_id: id } } as PlannedImageTask);

export const tempDir = (prefix = "omnibatch-engine-"): { dir: string; remove: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
};

export const testManifest = (dir: string, o: TestManifestOptions): RunnableManifest => {
  const name = o.name ?? `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const retryFailed = o.retryFailed ?? 0;
  const retryContentRisk = o.retryContentRisk ?? false;
  const tasks: PlannedTask[] = o.tasks.map((t, i) => {
    const id = `${name}-${t.job}-${i}`;
    const base = {
      id,
      job: t.job,
      vars: { i },
      dir: `${t.job}/task-${i}`,
      requestHash: `hash-${i}`,
      take: 0,
      attempt: 0,
      retryFailed,
      retryContentRisk,
      source,
      ...(t.estimate ? { estimate: { currency: "USD", amount: t.estimate } } : {}),
    };
    if (t.kind === "video") {
      return {
        ...base,
        kind: "video",
        slots: 1,
        request: {
          contents: [{ type: "prompt", text: t.prompt }],
          settings: { aspect_ratio: "16:9", duration: 5, resolution: "720p" },
          options: { external_task_id: id, ...(t.watermark ? { watermark_info: { enabled: true } } : {}) },
        },
      } satisfies PlannedVideoTask;
    }
    return {
      ...base,
      kind: "image",
      slots: t.n ?? 1,
      request: {
        prompt: t.prompt,
        n: t.n ?? 1,
        resolution: "1k",
        aspect_ratio: "16:9",
        external_task_id: id,
        ...(t.watermark ? { watermark_info: { enabled: true } } : {}),
      },
    } satisfies PlannedImageTask;
  });
  const jobIds = [...new Set(o.tasks.map((t) => t.job))];
  const jobs = jobIds.map((id) => ({ id, kind: o.tasks.find((t) => t.job === id)!.kind, retryFailed }));
  if (o.downstreamOf) jobs.push({ id: "clips", kind: "video", retryFailed, upstream: { job: o.downstreamOf, mode: "outputs" } } as never);
  return {
    file: join(dir, "test.yaml"),
    name,
    outputsDir: join(dir, "outputs"),
    lockfilePath: join(dir, "test.lock.json"),
    concurrency: o.concurrency ?? 4,
    ...(o.budget ? { budget: o.budget } : {}),
    jobs,
    tasks,
    expandDownstream: (job: string, items: UpstreamItem[]) =>
      items.map((item): PlannedVideoTask => {
        const id = `${name}-${job}-${item.sha256.slice(0, 16)}`;
        return {
          id,
          job,
          vars: { ...item.vars, item: item.index },
          dir: `${job}/${item.sha256.slice(0, 8)}`,
          requestHash: item.sha256,
          take: 0,
          attempt: 0,
          retryFailed,
          retryContentRisk,
          source,
          slots: 1,
          upstream: { job: item.job, task: item.task, output: item.index },
          kind: "video",
          request: {
            contents: [
              { type: "prompt", text: "@start turns slowly" },
              { type: "first_frame", url: item.url, id: "start" },
            ],
            settings: { duration: 5 },
            options: { external_task_id: id },
          },
        };
      }),
    withAttempt: (task: PlannedTask, attempt: number) => {
      const root = task.id.replace(/-a\d+$/, "");
      return { ...withId(task, attempt === 0 ? root : `${root}-a${attempt}`), attempt };
    },
  };
};
