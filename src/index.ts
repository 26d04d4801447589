// The library's public entry. Each module adds what it offers to programs that embed
// omnibatch instead of running the CLI.
export { ExitCode } from "./cli/ExitCode.js";
export { main as runCli } from "./cli/main.js";
export { OmniClient } from "./api/OmniClient.js";
export type { OmniClientConfig, OmniClientService, DownloadResponse, VideoQuery, FindImageOptions, ClientStats } from "./api/OmniClient.js";
export { ServiceError, TransportError, RequestTimeout, DecodeError, MissingApiKey, ClientConfigInvalid } from "./api/ApiError.js";
export type { ApiError, Operation } from "./api/ApiError.js";
export { classify, isOutcomeUnknown } from "./api/classify.js";
export type { ErrorClass } from "./api/classify.js";
export { withRetry } from "./api/retry.js";
export type * from "./api/wire.js";
export { runManifest, runLoadedManifest } from "./engine/runManifest.js";
export type { RunManifestOptions } from "./engine/runLoadedManifest.js";
export type { RunEvent, RunSummary, RunOutcome, JobCounts } from "./engine/RunEvent.js";
export { makePolicy, livePolicy, fastPolicy, RunPolicy } from "./engine/Policy.js";
export type { Policy } from "./engine/Policy.js";
export { Engine } from "./engine/Engine.js";
