// The values the client's operations take and give besides the wire types: what
// OmniClient.ts promises, shared with the operation modules that build it.

import type { Readable } from "node:stream";
import type { TaskAnomaly } from "./interpretAnswer.js";

export interface VideoQuery {
  readonly taskIds?: readonly string[];
  readonly externalTaskIds?: readonly string[];
}

export interface FindImageOptions {
  /** B3 page size while searching. Default 100. */
  readonly pageSize?: number;
  /** Pages to search at most. Default 50 (the service allows pageNum up to 1000). */
  readonly maxPages?: number;
  /**
   * Stop paging once a whole page is older than this (Unix ms): the list is newest first,
   * so older pages cannot hold a task created later. Pass the time the create intent was
   * recorded, minus a margin for clock skew.
   */
  readonly createdAfterMs?: number;
}

export interface DownloadResponse {
  readonly status: number;
  /** Response headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, to be consumed (or destroyed) by the caller. Errors if the transfer fails or exceeds downloadTimeoutMs. */
  readonly body: Readable;
  /** From Content-Length, when the server sent it. */
  readonly contentLength?: number;
}

/** The readable tasks of one or more query answers, and the unreadable ones (see interpretTaskAnswer). */
export interface CheckedTasks<T> {
  readonly tasks: T[];
  readonly anomalies: TaskAnomaly[];
}

export interface ClientStats {
  /** HTTP requests sent, per operation (each batch and each retry counts). */
  readonly requests: Record<string, number>;
}

/**
 * A create's last check (the run lock still ours), run synchronously right before the
 * request's bytes are written to a connected socket, for each send (a redirect's too):
 * undefined lets it go; an error withholds it (nothing sent) and the create fails with it.
 */
export type LastCheck<G> = () => G | undefined;

/** A B3 page asked for. */
export interface ImagePage {
  readonly pageNum: number;
  readonly pageSize: number;
}
