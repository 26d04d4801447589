// The engine as an Effect service: `run` takes a loaded manifest and runs it to the end
// (or to a stop) against the client, lockfile store, downloader and policy given to the
// layer. Nothing else is needed at call time (R = never).

import { Context, Effect, Layer } from "effect";
import { OmniClient } from "../api/OmniClient.js";
import { Downloader } from "../outputs/Downloader.js";
import type { LockfileWriteAfterSend, LockfileWriteError, RunLockLost } from "../state/LockfileError.js";
import { LockStore } from "../state/LockStore.js";
import { RunPolicy } from "../policy/Policy.js";
import { runEngine, type RunnerOptions, type RunnerResult } from "./Runner.js";

export interface EngineService {
  readonly run: (options: RunnerOptions) => Effect.Effect<RunnerResult, LockfileWriteError | LockfileWriteAfterSend | RunLockLost>;
}

export class Engine extends Context.Tag("omnibatch/Engine")<Engine, EngineService>() {
  static readonly layer: Layer.Layer<Engine, never, OmniClient | LockStore | Downloader | RunPolicy> = Layer.effect(
    Engine,
    Effect.gen(function* () {
      const deps = {
        client: yield* OmniClient,
        store: yield* LockStore,
        downloader: yield* Downloader,
        policy: yield* RunPolicy,
      };
      return { run: (options: RunnerOptions) => runEngine(deps, options) };
    }),
  );
}
