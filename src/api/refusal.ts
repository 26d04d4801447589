// One line for an answer saying a request can never succeed here (classify.ts "refused"):
// the address, what it lacks or refused (our request's path, the model) and what to check
// (the base URL, the service's name, the key). Never the key itself: the service's words
// are scrubbed of it by the client, and the key is named only by the variable it comes from.
// Pure: the run (engine) and `doctor` (src/run/doctor.ts) say the same thing.

import { Data } from "effect";
import type { ApiError } from "./ApiError.js";
import { isMissingModel } from "./classify.js";

export interface RefusalPlace {
  /** The service's address as the lockfile records it (run/serviceCheck.ts serviceIdentity: no credentials, no query). */
  readonly address: string;
  /** The model the refused request named (an image create's model_name), when known. */
  readonly model?: string | undefined;
}

/** The service refused a request for a reason that holds for every request (`message`: refusalLine). Exit 5. */
export class ServiceRefused extends Data.TaggedError("ServiceRefused")<{ readonly message: string }> {}

const BASE_URL = "the base URL (--base-url / OMNIBATCH_BASE_URL)";
const SERVICE = "the service's name (--service / OMNIBATCH_SERVICE)";

/** What to check first, by the kind of refusal; undefined for an answer that is no refusal of the address, name or key. */
export const refusalCheck = (error: ApiError): "key" | "address" | "model" | "permission" | "account" | undefined => {
  if (error._tag !== "ServiceError" || error.code === undefined) return undefined;
  const code = error.code;
  if (code >= 1000 && code <= 1004) return "key";
  if (code === 1202) return "address";
  if (isMissingModel(error)) return "model";
  if (code === 1103) return "permission";
  if (code >= 1000 && code < 1200) return "account";
  return undefined;
};

/** The line for a refused answer (see the module comment). */
export const refusalLine = (error: ApiError, place: RefusalPlace): string => {
  const at = place.address ? `the service at ${place.address}` : "the service";
  if (error._tag !== "ServiceError") return `${at}: ${error.message}`;
  const answered = `(HTTP ${error.httpStatus}, code ${error.code ?? "none"}: ${error.message})`;
  const request = error.request ?? error.operation;
  switch (refusalCheck(error)) {
    case "key":
      return `${at} refused the API key ${answered}: check that OMNIBATCH_API_KEY holds a key of this service, and ${BASE_URL}`;
    case "address":
      return `${at} has no ${request} ${answered}: check ${BASE_URL} and ${SERVICE}`;
    case "model":
      return `${at} has no ${place.model ? `model ${place.model} (${request})` : `model named by ${request}`} ${answered}: check the job's model and ${SERVICE}`;
    case "permission":
      return `${at} gives this key no access to ${request}${place.model ? ` (model ${place.model})` : ""} ${answered}: check that the key's account may use this API and model, ${SERVICE} and ${BASE_URL}`;
    case "account":
      return `the account was refused at ${place.address || "the service"} ${answered}: check the account (balance, resource packages, IP allow-list) and that OMNIBATCH_API_KEY is its key`;
    case undefined:
      return `${at} refused ${request} ${answered}`;
  }
};
