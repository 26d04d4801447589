// Result downloads: a GET of a signed result link, streaming, never carrying the key;
// redirects followed by hand (http(s) only); the link's address checked at connect time
// against the classes a result may lead to (AddressClass.ts). Retried like any
// idempotent call; a non-2xx answer is a ServiceError with the envelope's code, if any.

import type { ClientRequest } from "node:http";
import { Effect, Either } from "effect";
import { RequestTimeout, ServiceError, TransportError, type ApiError } from "./ApiError.js";
import type { ApiTransport } from "./ApiTransport.js";
import type { DownloadResponse } from "./clientTypes.js";
import { AddressRefused, decodeText, flatHeaders, headerValue, hostAddressClasses, readBody, sendRequest } from "./httpTransport.js";
import { interpretAnswer } from "./interpretAnswer.js";
import { connectCodes, errorCode, errorText, urlForMessage } from "./networkErrors.js";
import { RedirectRefused, redirectOf } from "./redirects.js";
import { resultAddressRefusal, type AddressClass } from "../protocol/AddressClass.js";

/** The most of a failed download's answer read, for an envelope's code and message. */
const maxErrorPageBytes = 64 * 1024;

/** A non-2xx download answer: the envelope's code if the body has one, else only the status. */
const downloadFailure = (t: ApiTransport, url: string, httpStatus: number, retryAfter: string | null, text: string): ServiceError => {
  const answer = interpretAnswer("getImage", { httpStatus, retryAfter, body: text }, t.schemas, t.scrub, Date.now());
  const fromEnvelope = Either.isLeft(answer) && answer.left._tag === "ServiceError" ? answer.left : undefined;
  const retryAfterMs = fromEnvelope?.retryAfterMs;
  return new ServiceError({
    operation: "download",
    code: fromEnvelope?.code,
    httpStatus,
    message:
      fromEnvelope?.code !== undefined
        ? `${fromEnvelope.message} (HTTP ${httpStatus} for ${urlForMessage(url)})`
        : `HTTP ${httpStatus} for ${urlForMessage(url)}`,
    requestId: fromEnvelope?.requestId ?? "",
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
};

const downloadOnce = (t: ApiTransport, url: string, refuseAddress: (address: string) => string | undefined) =>
  Effect.async<DownloadResponse, ApiError>((resume) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      resume(Effect.fail(new TransportError({ operation: "download", phase: "connect", reason: "malformed URL" })));
      return;
    }
    if (target.protocol !== "http:" && target.protocol !== "https:") {
      resume(
        Effect.fail(
          new ServiceError({
            operation: "download",
            code: undefined,
            httpStatus: 400,
            message: t.scrub(`refusing to fetch a result link that is not http(s) (${target.protocol.slice(0, 20)})`),
            requestId: "",
          }),
        ),
      );
      return;
    }
    t.count("download");
    const started = Date.now();
    const headersWithinMs = Math.min(t.timeoutMs, t.downloadTimeoutMs);
    let current: ClientRequest | undefined;
    let ended = false;
    const end = (effect: Effect.Effect<DownloadResponse, ApiError>) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      resume(effect);
    };
    const timer = setTimeout(() => {
      end(Effect.fail(new RequestTimeout({ operation: "download", afterMs: headersWithinMs, phase: "sent" })));
      current?.destroy();
    }, headersWithinMs);
    const failed = (error: unknown) => {
      const code = errorCode(error);
      end(
        Effect.fail(
          new TransportError({
            operation: "download",
            phase: error instanceof AddressRefused || (!(error instanceof RedirectRefused) && code !== undefined && connectCodes.has(code)) ? "connect" : "sent",
            reason: t.scrub(`${error instanceof RedirectRefused ? error.message : errorText(error)} (${urlForMessage(url)})`),
          }),
        ),
      );
    };
    // Result links are signed: a download never carries the key, wherever it points.
    const headers = { "User-Agent": t.userAgent };
    const get = (href: URL, hops: number) => {
      current = sendRequest(
        href,
        { method: "GET", headers, agents: t.downloadAgents, refuseAddress },
        (response) => {
          if (ended) {
            response.destroy();
            return;
          }
          const status = response.statusCode ?? 0;
          const next = redirectOf(response, href, hops);
          if (next !== undefined) {
            if (next instanceof RedirectRefused) return failed(next);
            if (next.protocol !== "http:" && next.protocol !== "https:") {
              return failed(new RedirectRefused(`HTTP ${status} redirecting to a link that is not http(s) (${next.protocol.slice(0, 20)}): not followed`));
            }
            try {
              return get(next, hops + 1);
            } catch (error) {
              return failed(error);
            }
          }
          if (status < 200 || status >= 300) {
            // The error page is read (within the header limit) for an envelope's code.
            readBody(response, maxErrorPageBytes, (_error, bytes) => {
              let text = "";
              try {
                text = decodeText(bytes, response.headers, maxErrorPageBytes);
              } catch {
                // an unreadable error page: the status alone says what happened
              }
              end(Effect.fail(downloadFailure(t, url, status, headerValue(response.headers, "retry-after"), text)));
            });
            return;
          }
          // Nothing asked for a compressed body: bytes sent compressed are not the result
          // (stored as they came, they would pass a size check against their own length).
          const encoding = headerValue(response.headers, "content-encoding")?.trim().toLowerCase();
          if (encoding !== undefined && encoding !== "" && encoding !== "identity") {
            response.destroy();
            return failed(new Error(`the result came with Content-Encoding "${encoding.slice(0, 40)}", which nothing asked for: not stored`));
          }
          // The body may take longer than an API answer: a separate, longer limit, on
          // the stream the caller reads (it errors when the limit passes).
          clearTimeout(timer);
          const bodyTimer = setTimeout(
            () => response.destroy(new Error(`the download took longer than ${t.downloadTimeoutMs} ms (${urlForMessage(url)})`)),
            Math.max(0, t.downloadTimeoutMs - (Date.now() - started)),
          );
          bodyTimer.unref();
          response.once("close", () => clearTimeout(bodyTimer));
          const lengthHeader = response.headers["content-length"];
          const length = Number(lengthHeader);
          end(
            Effect.succeed({
              status,
              headers: flatHeaders(response.headers),
              body: response,
              ...(lengthHeader !== undefined && Number.isFinite(length) ? { contentLength: length } : {}),
            }),
          );
        },
        failed,
      );
    };
    try {
      get(target, 0);
    } catch (error) {
      failed(error);
      current?.destroy();
    }
    return Effect.sync(() => {
      ended = true;
      clearTimeout(timer);
      current?.destroy();
    });
  });

/** `download(url)` over the transport's download agents. */
export const downloads = (t: ApiTransport) => {
  // Result links lead only to public addresses, or to addresses of a class the service's
  // own is on (the emulator on loopback): checked at connect time (AddressClass.ts).
  let serviceClasses: Promise<ReadonlySet<AddressClass>> | undefined;
  const linkGuard = Effect.promise(() => (serviceClasses ??= hostAddressClasses(t.base.hostname))).pipe(
    Effect.map((classes) => (address: string) => resultAddressRefusal(address, classes)),
  );
  return {
    download: (url: string) => Effect.flatMap(linkGuard, (refuse) => t.idempotent(downloadOnce(t, url, refuse))),
  };
};
