// A1 and B1, the two creates. Never retried here: whether a create may be sent again is
// the engine's decision (a create whose answer proves nothing is looked up first).

import { Effect } from "effect";
import type { ApiError } from "./ApiError.js";
import type { ApiTransport } from "./ApiTransport.js";
import type { LastCheck } from "./clientTypes.js";
import { fillImageCreated } from "./fillDefaults.js";
import { paths, type ImageCreated, type ImageCreateRequest, type VideoCreated, type VideoCreateRequest } from "../protocol/wire.js";

export const createOperations = (t: ApiTransport, defaultModel: string) => ({
  /** A1 to `/omni-video/{model}`; `model` absent: the service's default. */
  createVideo: <G = never>(req: VideoCreateRequest, lastCheck?: LastCheck<G>, model?: string) =>
    t.call("createVideo", "POST", paths.videoCreate(model ?? defaultModel), req, lastCheck) as Effect.Effect<VideoCreated, ApiError | G>,

  createImage: <G = never>(req: ImageCreateRequest, lastCheck?: LastCheck<G>) =>
    Effect.map(t.call("createImage", "POST", paths.imageCreate, req, lastCheck), (data) => fillImageCreated(data as ImageCreated)),
});
