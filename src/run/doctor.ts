// `omnibatch doctor [M.yaml]`: the check before the first paid run. It sends only requests
// that create nothing and cost nothing (a list of one page of one image, a query of videos
// and one of an image by an id that does not exist, a GET of the video create path, which
// takes POST only) and says, one line each: the address answers, the key is accepted,
// both products' endpoints answer, the video create path exists under the service's name,
// the outputs folder or store can be used (the run's own start checks), and with a
// manifest: its models are this service's and what the plan would create first.
// The verdicts are pure (doctorRules.ts); this file asks and gathers. Never the key: the
// client scrubs every answer of it, and lines name it only by its variable.

import { randomBytes } from "node:crypto";
import { Data, Effect, Either, Redacted } from "effect";
import type { ApiError } from "../api/ApiError.js";
import { classify } from "../api/classify.js";
import { OmniClient, type OmniClientConfig, type OmniClientService } from "../api/OmniClient.js";
import { refusalCheck, refusalLine, ServiceRefused } from "../api/refusal.js";
import { paths } from "../protocol/wire.js";
import { ManifestInvalid } from "../manifest/Diagnostic.js";
import { diffPlan } from "../plan/diffPlan.js";
import { planEntryLine } from "../plan/formatPlan.js";
import type { LoadedManifest } from "../manifest/LoadedManifest.js";
import { loadManifest } from "../manifest/loadManifest.js";
import { imageModelNames } from "../rules/imageCreate.js";
import { DEFAULT_SERVICE, defaultVideoModel } from "../rules/serviceNames.js";
import { readLockFile } from "../state/readLockFile.js";
import { openStoreSink } from "../outputs/openStore.js";
import { isStoreUrl } from "../fs/StoreUrl.js";
import { createPathVerdict, type DoctorLine } from "./doctorRules.js";
import { askReach, ServiceUnreachable, unreachableLine } from "./reachCheck.js";
import { serviceIdentity } from "./serviceCheck.js";
import { startChecks } from "./startChecks.js";

export type { DoctorLine } from "./doctorRules.js";

/** The manifest names a model the service (by its configured name) does not have. Exit 2. */
export class ModelNotOffered extends Data.TaggedError("ModelNotOffered")<{ readonly message: string }> {}

export interface DoctorOptions {
  /** The manifest to check (its outputs, models and plan); none: the service and `outputs` only. */
  readonly manifest?: string | undefined;
  /** Overrides OMNIBATCH_BASE_URL. */
  readonly baseUrl?: string | undefined;
  /** Overrides the manifest's outputs (a folder, resolved already, or an s3:// URL). */
  readonly outputs?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Client settings (the service's name, timeouts), as a run takes them. */
  readonly client?: Partial<OmniClientConfig> | undefined;
}

/** Every line of the check, in order; the first ✗ is the first thing to fix. */
export const doctor = async (options: DoctorOptions): Promise<DoctorLine[]> => {
  const lines: DoctorLine[] = [];
  const config = OmniClient.configFromEnv(options.env, { ...options.client, ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) });
  if (Either.isLeft(config)) lines.push({ check: "configuration", ok: false, text: config.left.message, problem: config.left });
  else lines.push(...(await Effect.runPromise(Effect.scoped(Effect.flatMap(OmniClient.make(config.right), (client) => serviceLines(client, config.right))))));
  const manifest = await manifestLine(options, lines);
  const outputsDir = options.outputs ?? manifest?.outputsDir;
  if (outputsDir !== undefined) lines.push(await outputsLine(outputsDir, manifest, options.env));
  if (manifest) {
    lines.push(modelsLine(manifest, Either.isRight(config) ? config.right.service : options.client?.service));
    lines.push(await planLine(manifest));
  }
  return lines;
};

/** A line from an answer that should have been a success (or a plain "not found", `notFoundOk`). */
const answerLine = (check: DoctorLine["check"], what: string, address: string, result: Either.Either<unknown, ApiError>, notFoundOk = false): DoctorLine => {
  if (Either.isRight(result)) return { check, ok: true, text: `${what} answers` };
  const error = result.left;
  if (notFoundOk && error._tag === "ServiceError" && classify(error) === "task-rejected") return { check, ok: true, text: `${what} answers (not found, as asked)` };
  if (refusalCheck(error) === "key") return { check, ok: "unsure", text: `${what}: not checked, the key was refused` };
  if (classify(error) === "refused") {
    const line = refusalLine(error, { address });
    return { check, ok: false, text: line, problem: new ServiceRefused({ message: line }) };
  }
  const line = `the service at ${address} did not answer ${what} as it should (${error.message}): try again later, or check the base URL`;
  return { check, ok: false, text: line, problem: new ServiceUnreachable({ address, message: line }) };
};

/** The address, the key, both products' endpoints and the video create path. */
const serviceLines = (client: OmniClientService, config: OmniClientConfig): Effect.Effect<DoctorLine[]> =>
  Effect.gen(function* () {
    const address = serviceIdentity(config.baseUrl);
    const reach = yield* askReach(client);
    if (reach._tag !== "answered") {
      const line =
        reach._tag === "unreachable" ? unreachableLine(address, reach.reason) : `no answer from ${address} within a few seconds: check the base URL (--base-url / OMNIBATCH_BASE_URL) and the network`;
      return [{ check: "address", ok: false, text: line, problem: new ServiceUnreachable({ address, message: line }) }];
    }
    const lines: DoctorLine[] = [{ check: "address", ok: true, text: `${address} answers` }];
    // An id no task has: the answers are "nothing found", whatever the account holds.
    const nobody = `omnibatch-doctor-${randomBytes(8).toString("hex")}`;
    const video = yield* Effect.either(client.queryVideos({ externalTaskIds: [nobody] }));
    const image = yield* Effect.either(client.getImage(nobody));
    const list: Either.Either<unknown, ApiError> = reach.error ? Either.left(reach.error) : Either.right(undefined);
    const answers = [list, video, image];
    const refusedKey = answers.flatMap((a) => (Either.isLeft(a) && refusalCheck(a.left) === "key" ? [a.left] : []))[0];
    if (refusedKey) {
      const line = refusalLine(refusedKey, { address });
      lines.push({ check: "key", ok: false, text: line, problem: new ServiceRefused({ message: line }) });
    } else if (Either.isRight(list) || Either.isRight(video)) {
      lines.push({ check: "key", ok: true, text: "the key (OMNIBATCH_API_KEY) is accepted" });
    } else {
      lines.push({ check: "key", ok: "unsure", text: "not confirmed: no request was answered with success" });
    }
    lines.push(answerLine("video", `GET ${paths.tasks} (a query by an external id no task has)`, address, video));
    const imageLine = answerLine("image", `GET ${paths.imageList}/{id} (an id no task has)`, address, image, true);
    const listLine = answerLine("image", `GET ${paths.imageList} (one page of one)`, address, list);
    lines.push(imageLine.ok === false || listLine.ok !== true ? (imageLine.ok === false ? imageLine : listLine) : { check: "image", ok: true, text: `${imageLine.text}; ${listLine.text}` });
    if (!refusedKey) lines.push(yield* createPathLine(config, address));
    return lines;
  });

/** A GET of the video create path (it takes POST only: nothing is created) and what its answer says. */
const createPathLine = (config: OmniClientConfig, address: string): Effect.Effect<DoctorLine> => {
  const path = paths.videoCreate(defaultVideoModel(config.service));
  return Effect.promise(async (): Promise<DoctorLine> => {
    let answer;
    try {
      // The key goes to the service's own address only (the base URL itself); no redirect is followed.
      const response = await fetch(`${config.baseUrl.replace(/\/+$/, "")}${path}`, {
        method: "GET",
        redirect: "manual",
        headers: { authorization: `Bearer ${Redacted.value(config.apiKey)}`, "user-agent": "omnibatch-doctor" },
        signal: AbortSignal.timeout(config.timeoutMs ?? 10_000),
      });
      const body = await response.text();
      let code: number | undefined;
      let message: string | undefined;
      try {
        const json = JSON.parse(body) as { code?: unknown; message?: unknown };
        code = typeof json.code === "number" ? json.code : undefined;
        message = typeof json.message === "string" ? json.message : undefined;
      } catch {
        message = undefined;
      }
      // Only read, never printed: a header is the service's text, and may echo the key.
      answer = { status: response.status, code, message, allow: response.headers.get("allow") ?? undefined };
    } catch (error) {
      return { check: "service name", ok: "unsure", text: `POST ${path}: not confirmed (${(error as Error).name}); a run stops at its first refused create` };
    }
    const said = `HTTP ${answer.status}${answer.code !== undefined ? `, code ${answer.code}` : ""}`;
    switch (createPathVerdict(answer)) {
      case "exists":
        return { check: "service name", ok: true, text: `POST ${path} exists here (a GET of it answered ${said}${answer.allow ? ", its Allow header naming POST" : ""})` };
      case "unsure":
        return { check: "service name", ok: "unsure", text: `POST ${path} could not be confirmed without a create (a GET of it answered ${said}); a run stops at its first refused create` };
      case "missing": {
        const line = `the service at ${address} has no POST ${path} (a GET of it answered ${said}, no such API): check the service's name (--service / OMNIBATCH_SERVICE) and the base URL (--base-url / OMNIBATCH_BASE_URL)`;
        return { check: "service name", ok: false, text: line, problem: new ServiceRefused({ message: line }) };
      }
    }
  });
};

/** Loads the manifest (pushing its line when invalid). */
const manifestLine = async (options: DoctorOptions, lines: DoctorLine[]): Promise<LoadedManifest | undefined> => {
  if (options.manifest === undefined) return undefined;
  try {
    const m = await loadManifest(options.manifest, { cwd: options.cwd, ...(options.client?.service ? { service: options.client.service } : {}) });
    return options.outputs === undefined ? m : { ...m, outputsDir: options.outputs };
  } catch (error) {
    if (!(error instanceof ManifestInvalid)) throw error;
    const first = error.diagnostics.find((d) => d.severity === "error");
    const count = error.diagnostics.filter((d) => d.severity === "error").length;
    const text = first ? `${first.file}:${first.line}:${first.col}: ${first.message}${count > 1 ? ` (and ${count - 1} more: omnibatch validate)` : ""}` : error.message.split("\n")[0]!;
    lines.push({ check: "manifest", ok: false, text, problem: error });
    return undefined;
  }
};

/** The outputs folder (links out of it, writable, as a run checks at its start) or store (listed). */
const outputsLine = async (outputsDir: string, manifest: LoadedManifest | undefined, env: DoctorOptions["env"]): Promise<DoctorLine> => {
  if (isStoreUrl(outputsDir)) {
    try {
      const sink = await openStoreSink(outputsDir, { env });
      await sink.close();
      return { check: "outputs", ok: true, text: `${outputsDir} can be listed` };
    } catch (error) {
      const e = error as { _tag?: string; message?: string };
      if (e._tag !== "StoreUnavailable") throw error;
      return { check: "outputs", ok: false, text: e.message ?? String(error), problem: error as { _tag: string; message: string } };
    }
  }
  const lockfilePath = manifest?.lockfilePath ?? `${outputsDir}/.omnibatch-doctor.lock.json`;
  const checked = await Effect.runPromise(Effect.either(startChecks(outputsDir, manifest ? manifest.tasks.map((t) => t.dir) : [], lockfilePath)));
  if (Either.isLeft(checked)) return { check: "outputs", ok: false, text: checked.left.message, problem: checked.left };
  return { check: "outputs", ok: true, text: `${outputsDir} can be written${manifest ? " (and the lockfile's folder)" : ""}` };
};

/** The image models the manifest's tasks name (the default when none) are this service's; the video create path is its name's. */
const modelsLine = (manifest: LoadedManifest, service: string | undefined): DoctorLine => {
  const offered = imageModelNames(service);
  const named = new Set<string>();
  const videoModels = new Set<string>();
  for (const t of manifest.tasks) {
    if (t.kind === "image") named.add(t.request.model_name ?? offered[0]!);
    else videoModels.add(t.model ?? defaultVideoModel(service ?? DEFAULT_SERVICE));
  }
  const missing = [...named].filter((m) => !offered.includes(m));
  if (missing.length > 0) {
    const line = `the manifest names ${missing.join(", ")}, which this service does not have (its image models: ${offered.join(", ")}): check the job's model and the service's name (--service / OMNIBATCH_SERVICE)`;
    return { check: "models", ok: false, text: line, problem: new ModelNotOffered({ message: line }) };
  }
  const parts = [...(named.size ? [`image ${[...named].join(", ")}`] : []), ...[...videoModels].map((m) => `video POST ${paths.videoCreate(m)}`)];
  return { check: "models", ok: true, text: parts.length ? `${parts.join("; ")}: this service's names` : "the manifest has no tasks yet" };
};

/** What a run would create first, from the plan (diffPlan.ts) against the lockfile. */
const planLine = async (manifest: LoadedManifest): Promise<DoctorLine> => {
  const plan = diffPlan(manifest, await readLockFile(manifest.lockfilePath));
  const toCreate = plan.entries.filter((e) => e.mark === "+" || e.mark === "~");
  if (toCreate.length === 0) return { check: "plan", ok: true, text: "a run would create nothing (omnibatch plan shows why)" };
  const cost = Object.entries(plan.estimate).map(([c, a]) => `${a} ${c}`).join(", ");
  return {
    check: "plan",
    ok: true,
    text: `a run would create ${toCreate.length} task(s)${cost ? ` (estimated ${cost})` : ""}, first: ${planEntryLine(toCreate[0]!)}`,
  };
};
