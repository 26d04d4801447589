// Delivers callbacks: the bare task object POSTed to the task's callback address on
// every status change, in order per task, signed Standard-Webhooks style when a secret
// is configured, retried with doubling backoff. Only loopback targets unless allowed.

import type { EmulatorConfig } from "./EmulatorConfig.js";
import { isLoopbackHost } from "../protocol/Loopback.js";
import { Prng } from "./Prng.js";
import { signWebhook } from "../protocol/signWebhook.js";

export interface CallbackFigures {
  /** Deliveries answered 2xx. */
  delivered: number;
  /** Deliveries that failed after every retry. */
  failed: number;
  /** Attempts made, retries included. */
  attempts: number;
  /** Callbacks not sent because the address is not loopback (or not a valid URL). */
  skipped: number;
  /** Callbacks lost on purpose (`callbacks.dropRate`). */
  dropped: number;
}

export class CallbackSender {
  readonly figures: CallbackFigures = { delivered: 0, failed: 0, attempts: 0, skipped: 0, dropped: 0 };
  private dice: Prng | undefined;
  private readonly chains = new Map<string, Promise<void>>();
  private abort = new AbortController();
  private messageSeq = 0;

  constructor(private readonly config: () => EmulatorConfig) {}

  /** Queues one delivery of `body` for task `taskId`; returns at once. */
  send(taskId: string, url: string, body: unknown): void {
    const cfg = this.config().callbacks;
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      this.figures.skipped += 1;
      return;
    }
    if ((target.protocol !== "http:" && target.protocol !== "https:") || (!cfg.allowNonLoopback && !isLoopbackHost(target.hostname))) {
      this.figures.skipped += 1;
      return;
    }
    if (cfg.dropRate > 0) {
      this.dice ??= new Prng(this.config().seed ^ 0x5eed);
      if (this.dice.chance(cfg.dropRate)) {
        this.figures.dropped += 1;
        return;
      }
    }
    const json = JSON.stringify(body);
    const messageId = `msg_${taskId}_${++this.messageSeq}`;
    const previous = this.chains.get(taskId) ?? Promise.resolve();
    const next = previous.then(() => this.deliver(target, messageId, json));
    this.chains.set(taskId, next);
    void next.finally(() => {
      if (this.chains.get(taskId) === next) this.chains.delete(taskId);
    });
  }

  private async deliver(target: URL, messageId: string, json: string): Promise<void> {
    const signal = this.abort.signal;
    const cfg = this.config().callbacks;
    for (let attempt = 0; attempt <= cfg.retries && !signal.aborted; attempt++) {
      if (attempt > 0) await sleep(cfg.backoffMs * 2 ** (attempt - 1), signal);
      if (signal.aborted) return;
      this.figures.attempts += 1;
      const timestamp = Math.floor(Date.now() / 1000);
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (cfg.secret) {
        headers["webhook-id"] = messageId;
        headers["webhook-timestamp"] = String(timestamp);
        headers["webhook-signature"] = signWebhook(cfg.secret, messageId, timestamp, json);
      }
      try {
        const res = await fetch(target, {
          method: "POST",
          headers,
          body: json,
          signal: AbortSignal.any([signal, AbortSignal.timeout(cfg.timeoutMs)]),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) {
          this.figures.delivered += 1;
          return;
        }
      } catch {
        // Retried below.
      }
    }
    if (!signal.aborted) this.figures.failed += 1;
  }

  /** Stops every pending delivery (used by close and reset). */
  cancelAll(): void {
    this.abort.abort();
    this.abort = new AbortController();
    this.chains.clear();
  }

  resetFigures(): void {
    this.figures.delivered = 0;
    this.figures.failed = 0;
    this.figures.attempts = 0;
    this.figures.skipped = 0;
    this.figures.dropped = 0;
  }
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
