// Switchable, seeded faults: server errors, 1302 bursts, connection resets before or
// after processing, slow answers and truncated downloads. One dice stream, drawn in a
// fixed order per request, so a failing run replays from faults.seed.

import type { EmulatorConfig, EndpointName } from "./EmulatorConfig.js";
import { Prng } from "./Prng.js";

export type PreFault =
  | { readonly kind: "reset" }
  | { readonly kind: "answer"; readonly http: number; readonly code: number; readonly message: string };

export class FaultInjector {
  private prng: Prng;
  private seed: number;
  private apiRequests = 0;
  /** How often each fault fired, for stats. */
  readonly fired = new Map<string, number>();

  constructor(private readonly config: () => EmulatorConfig) {
    this.seed = config().faults.seed;
    this.prng = new Prng(this.seed);
  }

  reset(): void {
    this.seed = this.config().faults.seed;
    this.prng = new Prng(this.seed);
    this.apiRequests = 0;
    this.fired.clear();
  }

  /** Restarts the dice when faults.seed was changed at run time. */
  reseedIfChanged(): void {
    if (this.config().faults.seed !== this.seed) {
      this.seed = this.config().faults.seed;
      this.prng = new Prng(this.seed);
    }
  }

  private count(name: string): void {
    this.fired.set(name, (this.fired.get(name) ?? 0) + 1);
  }

  private applies(endpoint: EndpointName): boolean {
    const list = this.config().faults.endpoints;
    return list.length === 0 || list.includes(endpoint);
  }

  /** Delay before answering (0: none). */
  slowMs(endpoint: EndpointName): number {
    const f = this.config().faults;
    if (!this.applies(endpoint) || f.slowMs <= 0 || !this.prng.chance(f.slowRate)) return 0;
    this.count("slow");
    return f.slowMs;
  }

  /** A fault that replaces processing of an API request, if one fires. */
  before(endpoint: EndpointName): PreFault | undefined {
    if (endpoint === "download" || !this.applies(endpoint)) return undefined;
    const f = this.config().faults;
    this.apiRequests += 1;
    if (this.prng.chance(f.resetBeforeRate)) {
      this.count("resetBefore");
      return { kind: "reset" };
    }
    const { every, length } = f.rate1302Burst;
    if (every > 0 && length > 0 && (this.apiRequests - 1) % (every + length) >= every) {
      this.count("1302");
      return { kind: "answer", http: 429, code: 1302, message: "requests too fast, slow down (emulated burst)" };
    }
    if (this.prng.chance(f.http5xxRate)) {
      this.count("http5xx");
      const pick = this.prng.int(0, 2);
      const http = [500, 502, 503][pick]!;
      return { kind: "answer", http, code: http === 503 ? 5001 : 5000, message: `internal error (emulated HTTP ${http})` };
    }
    if (this.prng.chance(f.code5000Rate)) {
      this.count("5000");
      return { kind: "answer", http: 500, code: 5000, message: "internal error (emulated)" };
    }
    if (this.prng.chance(f.code5001Rate)) {
      this.count("5001");
      return { kind: "answer", http: 503, code: 5001, message: "service unavailable, under maintenance (emulated)" };
    }
    if (this.prng.chance(f.code5002Rate)) {
      this.count("5002");
      return { kind: "answer", http: 504, code: 5002, message: "internal timeout (emulated)" };
    }
    return undefined;
  }

  /** After a create was carried out: answer 500 anyway (the task exists). */
  errorAfterCreate(endpoint: EndpointName): boolean {
    if (!this.applies(endpoint) || !this.prng.chance(this.config().faults.errorAfterCreateRate)) return false;
    this.count("errorAfterCreate");
    return true;
  }

  /** After processing: destroy the connection instead of answering. */
  resetAfter(endpoint: EndpointName): boolean {
    if (endpoint === "download" || !this.applies(endpoint) || !this.prng.chance(this.config().faults.resetAfterRate)) return false;
    this.count("resetAfter");
    return true;
  }

  /** Whether this task item of a query answer is served malformed (listed external id, or the dice). */
  malformed(endpoint: EndpointName, externalId: string | undefined): boolean {
    const m = this.config().faults.malformedTask;
    const hit = (externalId !== undefined && m.externalIds.includes(externalId)) || (this.applies(endpoint) && this.prng.chance(m.rate));
    if (hit) this.count("malformedTask");
    return hit;
  }

  /** Whether this A2/B2 answer carries a task nobody asked for. */
  unrequested(endpoint: EndpointName): boolean {
    if (!this.applies(endpoint) || !this.prng.chance(this.config().faults.unrequestedTaskRate)) return false;
    this.count("unrequestedTask");
    return true;
  }

  /** Whether this API answer stalls (faults.stall). */
  stall(endpoint: EndpointName): boolean {
    if (endpoint === "download" || !this.applies(endpoint) || !this.prng.chance(this.config().faults.stall.rate)) return false;
    this.count("stall");
    return true;
  }

  truncateDownload(): boolean {
    if (!this.applies("download") || !this.prng.chance(this.config().faults.truncatedDownloadRate)) return false;
    this.count("truncatedDownload");
    return true;
  }
}
