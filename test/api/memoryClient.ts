// A test layer for OmniClient: a tiny service in memory with canned answers, so engine
// parts are tested without HTTP. Tasks advance one step (submitted -> processing ->
// succeeded) each time they are read; `script.create` answers creates in order (an error,
// or "land": the task is made but the answer is lost, as on a timeout after sending).
// The end-to-end tests against the real emulator stay the proof of the wire.

import { Effect, Layer } from "effect";
import { ServiceError, TransportError, type ApiError } from "../../src/api/ApiError.js";
import { OmniClient, type OmniClientService } from "../../src/api/OmniClient.js";
import type { ImageTask, VideoTask } from "../../src/protocol/wire.js";

export type CreateScript = "ok" | "land-then-timeout" | "timeout" | "no-slot" | "refused" | "rejected";

export interface MemoryService {
  readonly client: OmniClientService;
  readonly layer: Layer.Layer<OmniClient>;
  /** Creates that reached the service (made a task), by external id. */
  readonly made: Map<string, number>;
  /** Requests per operation. */
  readonly calls: Record<string, number>;
  /** Puts a task at the service as if an earlier run had made it. */
  readonly seed: (externalId: string, kind: "video" | "image", status?: "submitted" | "processing" | "succeeded") => string;
}

interface Held {
  readonly id: string;
  readonly externalId: string;
  readonly kind: "video" | "image";
  status: "submitted" | "processing" | "succeeded";
}

const sent = (operation: "createVideo" | "createImage"): ApiError => new TransportError({ operation, phase: "sent", reason: "timeout after sending" });
const service = (operation: "createVideo" | "createImage", code: number, message: string): ApiError =>
  new ServiceError({ operation, code, httpStatus: 400, message, requestId: "r" });

export const memoryService = (script: { create?: CreateScript[] } = {}): MemoryService => {
  const tasks = new Map<string, Held>();
  const made = new Map<string, number>();
  const calls: Record<string, number> = {};
  const creates = [...(script.create ?? [])];
  let serial = 0;
  const count = (op: string) => (calls[op] = (calls[op] ?? 0) + 1);
  const seed = (externalId: string, kind: "video" | "image", status: Held["status"] = "submitted") => {
    const id = `mem-${++serial}`;
    tasks.set(id, { id, externalId, kind, status });
    return id;
  };
  const step = (t: Held) => {
    t.status = t.status === "submitted" ? "processing" : "succeeded";
  };
  const video = (t: Held): VideoTask => ({
    id: t.id,
    status: t.status,
    message: "",
    create_time: 1,
    update_time: 2,
    external_id: t.externalId,
    ...(t.status === "succeeded" ? { outputs: [{ type: "video", id: `${t.id}-o`, url: `http://127.0.0.1:9/${t.id}.mp4`, duration: "5" }] } : {}),
    billing: t.status === "succeeded" ? [{ charge_type: "cash", amount: "0.5", currency: "USD" }] : [],
  }) as VideoTask;
  const image = (t: Held): ImageTask => ({
    task_id: t.id,
    task_status: t.status === "succeeded" ? "succeed" : t.status,
    task_status_msg: "",
    task_info: { external_task_id: t.externalId },
    ...(t.status === "succeeded" ? { task_result: { result_type: "single", images: [{ index: 0, url: `http://127.0.0.1:9/${t.id}.png` }] } } : {}),
    watermark_info: { enabled: false },
    created_at: 1,
    updated_at: 2,
  }) as ImageTask;
  const create = (operation: "createVideo" | "createImage", kind: "video" | "image", externalId: string) =>
    Effect.suspend((): Effect.Effect<Held, ApiError> => {
      count(operation);
      const next = creates.shift() ?? "ok";
      const make = () => {
        made.set(externalId, (made.get(externalId) ?? 0) + 1);
        return tasks.get(seed(externalId, kind))!;
      };
      switch (next) {
        case "ok":
          return Effect.succeed(make());
        case "land-then-timeout":
          make();
          return Effect.fail(sent(operation));
        case "timeout":
          return Effect.fail(sent(operation));
        case "no-slot":
          return Effect.fail(service(operation, 1303, "no free slot"));
        case "refused":
          return Effect.fail(service(operation, 1102, "insufficient balance"));
        case "rejected":
          return Effect.fail(service(operation, 1201, "prompt too long"));
      }
    });
  const byExternal = (kind: "video" | "image", ids: readonly string[]) =>
    [...tasks.values()].filter((t) => t.kind === kind && ids.includes(t.externalId));

  const client: OmniClientService = {
    createVideo: (req) => Effect.map(create("createVideo", "video", req.options!.external_task_id!), (t) => ({ id: t.id, status: t.status, create_time: 1, update_time: 1 })),
    createImage: (req) =>
      Effect.map(create("createImage", "image", req.external_task_id!), (t) => ({
        task_id: t.id,
        task_info: { external_task_id: t.externalId },
        task_status: "submitted" as const,
        created_at: 1,
        updated_at: 1,
      })),
    queryVideos: (q) =>
      Effect.sync(() => {
        count("queryVideos");
        const found = q.taskIds ? q.taskIds.flatMap((id) => (tasks.get(id)?.kind === "video" ? [tasks.get(id)!] : [])) : byExternal("video", q.externalTaskIds ?? []);
        const answers = found.map(video);
        if (q.taskIds) for (const t of found) step(t);
        return answers;
      }),
    cursorVideos: () => Effect.die("not used by the engine"),
    getImage: (id) =>
      Effect.suspend(() => {
        count("getImage");
        const t = tasks.get(id) ?? [...tasks.values()].find((x) => x.externalId === id);
        if (!t) return Effect.fail(new ServiceError({ operation: "getImage", code: 1203, httpStatus: 404, message: "not found", requestId: "r" }));
        const answer = image(t);
        step(t);
        return Effect.succeed(answer);
      }),
    listImages: () => Effect.sync(() => (count("listImages"), [...tasks.values()].filter((t) => t.kind === "image").map(image))),
    findImageByExternalId: (externalId) => Effect.sync(() => byExternal("image", [externalId]).map(image)[0]),
    findImagesByExternalIds: (ids) =>
      Effect.sync(() => {
        count("findImagesByExternalIds");
        return new Map(byExternal("image", ids).map((t) => [t.externalId, image(t)] as const));
      }),
    download: () => Effect.die("downloads go through the memory downloader"),
    // The per-task checked answers: this memory service sends no malformed task.
    queryVideosChecked: (q) => Effect.map(client.queryVideos(q), (tasks) => ({ tasks, anomalies: [] })),
    cursorVideosChecked: () => Effect.die("not used by the engine"),
    getImageChecked: (id) => Effect.map(client.getImage(id), (t) => ({ tasks: [t], anomalies: [] })),
    listImagesChecked: (p) => Effect.map(client.listImages(p), (tasks) => ({ tasks, anomalies: [] })),
    stats: Effect.sync(() => ({ requests: { ...calls } })),
  };
  return { client, layer: Layer.succeed(OmniClient, client), made, calls, seed };
};
