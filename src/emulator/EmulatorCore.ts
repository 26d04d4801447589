// The emulator's account and controls, apart from HTTP: its configuration, clock, task
// store, faults, callbacks and figures, and what RunningEmulator lets a caller do with
// them (configure, advance the clock, reset, stats, save and restore the account). The
// server (Emulator.ts) routes requests to handlers that work on one EmulatorCore.

import type { Socket } from "node:net";
import type { RuleContext } from "../rules/index.js";
import { EmulatorApi } from "./ApiHandlers.js";
import { CallbackSender, type CallbackFigures } from "./CallbackSender.js";
import { EmulatorClock } from "./Clock.js";
import type { EmulatorState } from "./EmulatorState.js";
import { configProblems, defaultEmulatorConfig, mergeConfig, unknownKeys, type DeepPartial, type EmulatorConfig } from "./EmulatorConfig.js";
import { configInvalid } from "./EmulatorConfigInvalid.js";
import { elementLookup } from "./ElementLibrary.js";
import { FaultInjector } from "./FaultInjector.js";
import type { SlotFigures } from "./SlotPool.js";
import { TaskStore } from "./TaskStore.js";
import { imageTaskView, videoTaskView, type ViewContext } from "./TaskViews.js";
import { UrlSigner } from "./UrlSigner.js";

export interface EmulatorStats {
  /** The emulator clock (Unix ms). */
  readonly now: number;
  /** Requests per endpoint name (video.create, video.query, video.cursor, image.create, image.get, image.list, download). */
  readonly requests: Record<string, number>;
  /** Error answers per envelope code. */
  readonly rejections: Record<string, number>;
  /** Tasks actually created per external_task_id. */
  readonly creates: Record<string, number>;
  readonly tasks: {
    readonly total: number;
    readonly video: number;
    readonly image: number;
    readonly byStatus: { readonly submitted: number; readonly processing: number; readonly succeeded: number; readonly failed: number };
    /**
     * Tasks whose end (succeeded or failed) a query answer (A2, A3, B2, B3) showed at least
     * once, as the handler answered (before any fault injected in transit): with no callback
     * accepted, every task whose end a run saw.
     */
    readonly endsAnswered: number;
  };
  readonly slots: { readonly video: SlotFigures; readonly image: SlotFigures };
  /** Emulator-clock time of the first create and of the last task end (null before). */
  readonly firstCreateAt: number | null;
  readonly lastFinishAt: number | null;
  readonly downloads: number;
  readonly bytesServed: number;
  /** How often each fault fired. */
  readonly faults: Record<string, number>;
  readonly callbacks: CallbackFigures;
  /** CPU time of the whole process the emulator runs in (for load measurements). */
  readonly process: { readonly cpuUserMs: number; readonly cpuSystemMs: number };
  /**
   * Client connections open now. A request is counted (`requests`) when its head is read,
   * before its connection's end is: once a client has closed its connections and this is 0,
   * every request it wrote is counted. (In one process a request written just before its
   * client ends is read on a later turn of the event loop, after the client's caller goes on.)
   */
  readonly connections: number;
}

/** Merges and checks a config patch; throws EmulatorConfigInvalid naming every problem. */
export const resolveEmulatorConfig = (
  patch: DeepPartial<EmulatorConfig> | undefined,
  base: EmulatorConfig = defaultEmulatorConfig,
  where = "config",
): EmulatorConfig => {
  const unknown = unknownKeys(base, patch);
  const merged = mergeConfig(base, patch);
  const problems = [...unknown.map((k) => `${k} is not a setting of the emulator`), ...configProblems(merged)];
  if (problems.length > 0) throw configInvalid(where, problems);
  return merged;
};

/** Counters of what the server did, cleared by reset. */
interface Figures {
  requests: Record<string, number>;
  rejections: Record<string, number>;
  downloads: number;
  bytesServed: number;
}

const noFigures = (): Figures => ({ requests: {}, rejections: {}, downloads: 0, bytesServed: 0 });

export class EmulatorCore {
  config: EmulatorConfig;
  readonly clock = new EmulatorClock();
  readonly signer = new UrlSigner();
  readonly store: TaskStore;
  readonly faults: FaultInjector;
  readonly callbacks: CallbackSender;
  readonly api: EmulatorApi;
  figures = noFigures();
  /** Client connections open now (the server adds and removes them). */
  readonly sockets = new Set<Socket>();
  /** Sequence of the unrequested tasks faults add to query answers. */
  unrequestedSeq = 0;
  private baseUrl = "";
  private requestSeq = 0;
  private readonly requestPrefix = `${Date.now().toString(36)}`;
  private viewCache: { config: EmulatorConfig; view: ViewContext } | undefined;
  private rulesCache: { elements: EmulatorConfig["elements"]; service: string; modelLimits: boolean; ctx: RuleContext } | undefined;
  private dueTimer: NodeJS.Timeout | undefined;
  private dueAt = Number.POSITIVE_INFINITY;
  private ticker: NodeJS.Timeout | undefined;

  constructor(configPatch?: DeepPartial<EmulatorConfig>) {
    this.config = resolveEmulatorConfig(configPatch);
    const getConfig = () => this.config;
    this.store = new TaskStore(getConfig);
    this.faults = new FaultInjector(getConfig);
    this.callbacks = new CallbackSender(getConfig);
    // A task that asked for callbacks gets one at each transition, with its view then.
    this.store.onTransition = ({ task, at }) => {
      if (task.callbackUrl === undefined) return;
      const body = task.kind === "video" ? videoTaskView(this.view(), task, at) : imageTaskView(this.view(), task, at);
      this.callbacks.send(task.id, task.callbackUrl, body);
    };
    this.api = new EmulatorApi({ config: getConfig, store: this.store, now: () => this.clock.now(), view: () => this.view(), rules: () => this.rules() });
  }

  /** The address result links are made on, once the server listens. */
  setBaseUrl(url: string): void {
    this.baseUrl = url;
    this.viewCache = undefined;
  }

  view(): ViewContext {
    if (this.viewCache?.config !== this.config) this.viewCache = { config: this.config, view: { config: this.config, signer: this.signer, baseUrl: this.baseUrl } };
    return this.viewCache.view;
  }

  rules(): RuleContext {
    const config = this.config;
    const cached = this.rulesCache;
    if (cached?.elements !== config.elements || cached.service !== config.service || cached.modelLimits !== config.faults.modelLimits) {
      this.rulesCache = {
        elements: config.elements,
        service: config.service,
        modelLimits: config.faults.modelLimits,
        ctx: { service: config.service, elements: elementLookup(config.elements), modelLimits: config.faults.modelLimits },
      };
    }
    return this.rulesCache!.ctx;
  }

  nextRequestId(): string {
    return `${this.requestPrefix}-${(++this.requestSeq).toString(36)}`;
  }

  countRequest(name: string): void {
    this.figures.requests[name] = (this.figures.requests[name] ?? 0) + 1;
  }

  stats(): EmulatorStats {
    const { store, config, figures } = this;
    const now = this.clock.now();
    store.settle(now);
    return {
      now,
      requests: { ...figures.requests },
      rejections: { ...figures.rejections },
      creates: store.createsByExternal(),
      tasks: { total: store.all.length, video: store.videos.length, image: store.images.length, byStatus: { ...store.byStatus }, endsAnswered: store.endsAnswered },
      slots: {
        video: store.slots.figures("video", config.slots.video, now),
        image: store.slots.figures("image", config.slots.image, now),
      },
      firstCreateAt: store.firstCreateAt ?? null,
      lastFinishAt: store.lastFinishAt ?? null,
      downloads: figures.downloads,
      bytesServed: figures.bytesServed,
      faults: Object.fromEntries(this.faults.fired),
      callbacks: { ...this.callbacks.figures },
      process: (({ user, system }) => ({ cpuUserMs: user / 1000, cpuSystemMs: system / 1000 }))(process.cpuUsage()),
      connections: this.sockets.size,
    };
  }

  configure(patch: DeepPartial<EmulatorConfig>): void {
    this.config = resolveEmulatorConfig(patch, this.config, "runtime patch");
    this.faults.reseedIfChanged();
  }

  advanceClock(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError("advanceClock: ms must be a finite number >= 0");
    this.clock.advance(ms);
    this.store.settle(this.clock.now());
  }

  reset(): void {
    this.callbacks.cancelAll();
    this.callbacks.resetFigures();
    this.store.reset();
    this.clock.reset();
    this.faults.reset();
    this.figures = noFigures();
  }

  saveState(): EmulatorState {
    this.store.settle(this.clock.now());
    return { clock: this.clock.saved(), store: this.store.saved() };
  }

  restoreState(state: EmulatorState): void {
    if (this.store.all.length > 0) throw new Error("restoreState: this emulator already holds tasks");
    this.clock.restore(state.clock);
    this.store.restore(state.store, this.clock.now());
    this.armDue();
  }

  /**
   * Transitions also happen while nobody asks (callbacks are due on time): a timer for the
   * next due transition, re-armed by each settle, and a 10 ms tick that arms it for new tasks.
   */
  startTicking(): void {
    this.ticker = setInterval(() => {
      this.store.settle(this.clock.now());
      this.armDue();
    }, 10);
    this.ticker.unref();
  }

  stopTicking(): void {
    clearInterval(this.ticker);
    clearTimeout(this.dueTimer);
  }

  private armDue(): void {
    const at = this.store.nextEventAt();
    if (at === undefined || at >= this.dueAt) return;
    clearTimeout(this.dueTimer);
    this.dueAt = at;
    this.dueTimer = setTimeout(() => {
      this.dueAt = Number.POSITIVE_INFINITY;
      this.store.settle(this.clock.now());
      this.armDue();
    }, Math.max(0, at - this.clock.now()));
    this.dueTimer.unref();
  }
}
