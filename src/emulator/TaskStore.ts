// All tasks of the emulated account, their indexes (id, external id, creation order
// per kind), the concurrency slots and the balance. Transitions are settled in time
// order whenever the clock is read, so slot accounting and callbacks follow the clock
// exactly, including when a test moves it forward by days.

import type { Thumbnail } from "./ReferenceImage.js";
import { costOf, priceOf, type Charge, type PricedTask } from "./Pricing.js";
import { EventQueue } from "./EventQueue.js";
import type { EmulatorConfig } from "./EmulatorConfig.js";
import { parseDecimal } from "./Decimal.js";
import { Prng } from "./Prng.js";
import { SlotPool, type ProductKind } from "./SlotPool.js";
import { contentRiskMessage, emulatorTaskId, type ImageRequest, type Phase, type Task, type VideoRequest } from "./Task.js";

export interface NewTask {
  readonly kind: ProductKind;
  readonly prompt: string;
  readonly externalId?: string;
  readonly callbackUrl?: string;
  readonly watermark: boolean;
  readonly video?: VideoRequest;
  /** For `auto` series the count is drawn here; pass count 0 and autoCount true. */
  readonly image?: ImageRequest;
  /** Ends failed with this reason whatever the dice say (media refused after create). */
  readonly failWith?: string;
  /** A small copy of the first reference image, when it could be read. */
  readonly reference?: Thumbnail;
}

export type CreateOutcome =
  | { readonly kind: "created"; readonly task: Task }
  | { readonly kind: "existing"; readonly task: Task }
  | { readonly kind: "refused"; readonly http: number; readonly code: number; readonly message: string };

export interface Transition {
  readonly task: Task;
  readonly phase: Phase;
  readonly at: number;
}

/** The tasks of a store and where its id sequence and random draws are (TaskStore.saved). */
export interface SavedTasks {
  /** The id epoch: ids are 7, the epoch (3 digits) and the task's seq (12 digits). */
  readonly epoch: number;
  /** Prng.position of the store's draws. */
  readonly prng: number;
  /** Every task in creation order (seq 1, 2, ...). */
  readonly tasks: readonly Task[];
}

const autoRatios = ["1:1", "16:9", "9:16", "4:3", "3:4"] as const;

export class TaskStore {
  /** Every task in creation order. */
  readonly all: Task[] = [];
  readonly videos: Task[] = [];
  readonly images: Task[] = [];
  /** The first task per external id; the later ones (only under duplicateExternalId "create-second") apart. */
  private readonly byExternal = new Map<string, Task>();
  private readonly laterByExternal = new Map<string, Task[]>();
  /** Charges and image requests are shared by equal tasks (a few hundred bytes less per task held). */
  private charges: { billing: EmulatorConfig["billing"]; byKey: Map<string, Charge> } | undefined;
  private readonly imageRequests = new Map<string, ImageRequest>();
  private readonly events = new EventQueue();
  slots = new SlotPool();
  private prng: Prng;
  private epoch = 0;
  /** Charges of tasks in flight, held against the balance. */
  private reserved = 0n;
  /** Charges taken from the balance by succeeded tasks. */
  private spent = 0n;
  readonly byStatus: Record<Phase, number> = { submitted: 0, processing: 0, succeeded: 0, failed: 0 };
  firstCreateAt: number | undefined;
  lastFinishAt: number | undefined;
  /** Tasks whose end (succeeded or failed) a query answer has shown at least once (`noteAnswered`). */
  endsAnswered = 0;
  /** One bit per task (by seq): its end already counted in `endsAnswered`. */
  private endAnswered = new Uint8Array(1024);
  /** Called for every status change, in time order. */
  onTransition: (t: Transition) => void = () => {};

  constructor(private readonly config: () => EmulatorConfig) {
    this.prng = new Prng(config().seed);
  }

  reset(): void {
    this.all.length = 0;
    this.videos.length = 0;
    this.images.length = 0;
    this.byExternal.clear();
    this.laterByExternal.clear();
    this.events.clear();
    this.slots = new SlotPool();
    this.prng = new Prng(this.config().seed);
    this.epoch += 1;
    this.reserved = 0n;
    this.spent = 0n;
    for (const k of Object.keys(this.byStatus) as Phase[]) this.byStatus[k] = 0;
    this.firstCreateAt = undefined;
    this.lastFinishAt = undefined;
    this.endsAnswered = 0;
    this.endAnswered = new Uint8Array(1024);
  }

  /**
   * Counts that a query answer (A2, A3, B2, B3) showed `t` as of `now`: once ended, its end
   * is counted once. Tests tell by it how a run learned its tasks' ends (no callback
   * accepted: every end it saw came from a query).
   */
  noteAnswered(t: Task, now: number): void {
    if (now < t.endAt) return;
    const byte = t.seq >> 3;
    const bit = 1 << (t.seq & 7);
    if (byte >= this.endAnswered.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.endAnswered.length * 2));
      grown.set(this.endAnswered);
      this.endAnswered = grown;
    }
    if ((this.endAnswered[byte]! & bit) !== 0) return;
    this.endAnswered[byte]! |= bit;
    this.endsAnswered += 1;
  }

  /** The task with this id: ids are 7, the epoch (3 digits) and seq (12 digits), so no index is kept. */
  get(id: string): Task | undefined {
    if (id.length !== 16 || !/^7\d{15}$/.test(id) || Number(id.slice(1, 4)) !== this.epoch % 1000) return undefined;
    const task = this.all[Number(id.slice(4)) - 1];
    return task !== undefined && task.id === id ? task : undefined;
  }

  /** Tasks actually created per external id, in order of first use. */
  createsByExternal(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const id of this.byExternal.keys()) out[id] = 1 + (this.laterByExternal.get(id)?.length ?? 0);
    return out;
  }

  getByExternal(externalId: string): Task | undefined {
    return this.byExternal.get(externalId);
  }

  /** When the next transition is due (emulator clock), if any. */
  nextEventAt(): number | undefined {
    return this.events.peek()?.at;
  }

  /** Processes every transition due at `now`, in time order. */
  settle(now: number): void {
    for (let e = this.events.peek(); e !== undefined && e.at <= now; e = this.events.peek()) {
      this.events.pop();
      // seq is 1-based creation order: the task's place in `all`.
      const task = this.all[e.seq - 1]!;
      if (e.phase === "processing") {
        this.byStatus.submitted -= 1;
        this.byStatus.processing += 1;
        this.events.push({ at: task.endAt, seq: task.seq, phase: "end" });
        this.onTransition({ task, phase: "processing", at: e.at });
      } else {
        this.byStatus.processing -= 1;
        this.byStatus[task.outcome] += 1;
        this.slots.release(task.kind, task.slots, task.createdAt, task.endAt);
        const cost = costOf(task.charge);
        this.reserved -= cost;
        if (task.outcome === "succeeded") this.spent += cost;
        if (this.lastFinishAt === undefined || task.endAt > this.lastFinishAt) this.lastFinishAt = task.endAt;
        this.onTransition({ task, phase: task.outcome, at: e.at });
      }
    }
  }

  /** Creates a task at `now`, or says why not (duplicate, balance, slots). Nothing is kept on refusal. */
  create(req: NewTask, now: number): CreateOutcome {
    const cfg = this.config();
    this.settle(now);
    if (req.externalId !== undefined) {
      const existing = this.byExternal.get(req.externalId);
      if (existing) {
        if (cfg.faults.duplicateExternalId === "return-existing" && existing.kind === req.kind) {
          return { kind: "existing", task: existing };
        }
        if (cfg.faults.duplicateExternalId === "create-second") return this.createNew(req, now);
        const field = req.kind === "video" ? "options.external_task_id" : "external_task_id";
        return {
          kind: "refused",
          http: 400,
          code: 1201,
          message:
            cfg.answers.duplicateMessage === "live"
              ? `External_task_id ${req.externalId} already exists`
              : `${field}: '${req.externalId}' is already used by task ${existing.id}; custom task ids are unique within the account`,
        };
      }
    }
    return this.createNew(req, now);
  }

  /** Every task carrying this external id, oldest first (more than one only under "create-second"). */
  allByExternal(externalId: string): readonly Task[] {
    const first = this.byExternal.get(externalId);
    if (first === undefined) return [];
    const later = this.laterByExternal.get(externalId);
    return later === undefined ? [first] : [first, ...later];
  }

  /** priceOf, shared by equal tasks while the billing settings stay the same object. */
  private chargeOf(task: PricedTask, billing: EmulatorConfig["billing"]): Charge {
    if (this.charges?.billing !== billing) this.charges = { billing, byKey: new Map() };
    const key = task.kind === "video" ? `v/${task.resolution}/${task.durationSec}` : `i/${task.resolution}/${task.count}`;
    let charge = this.charges.byKey.get(key);
    if (charge === undefined) {
      charge = priceOf(task, billing);
      if (this.charges.byKey.size >= 1024) this.charges.byKey.clear();
      this.charges.byKey.set(key, charge);
    }
    return charge;
  }

  /** One shared object per distinct image request. */
  private shareImageRequest(image: ImageRequest): ImageRequest {
    const key = `${image.resolution}/${image.resultType}/${image.count}/${image.autoCount}/${image.aspectRatio}/${image.modelName}`;
    const hit = this.imageRequests.get(key);
    if (hit !== undefined) return hit;
    if (this.imageRequests.size >= 1024) this.imageRequests.clear();
    this.imageRequests.set(key, image);
    return image;
  }

  private createNew(req: NewTask, now: number): CreateOutcome {
    const cfg = this.config();
    // Draws happen in a fixed order so a seed replays the same schedule.
    let image = req.image;
    if (image?.autoCount) image = { ...image, count: this.prng.int(2, 9) };
    if (image && image.aspectRatio === "auto") image = { ...image, aspectRatio: autoRatios[this.prng.int(0, autoRatios.length - 1)]! };
    const slots = req.kind === "video" ? 1 : image!.count;
    const limit = cfg.slots[req.kind];
    const inUse = this.slots.inUse(req.kind);
    if (inUse + slots > limit) {
      return {
        kind: "refused",
        http: 429,
        code: 1303,
        message: `parallel task over resource pack limit: ${req.kind} slots in use ${inUse} of ${limit}, this task needs ${slots}`,
      };
    }
    if (image) image = this.shareImageRequest(image);
    const charge = this.chargeOf(
      req.kind === "video"
        ? { kind: "video", resolution: req.video!.resolution, durationSec: req.video!.durationSec }
        : { kind: "image", resolution: image!.resolution, count: image!.count },
      cfg.billing,
    );
    if (cfg.billing.balance !== undefined) {
      const balance = parseDecimal(cfg.billing.balance) ?? 0n;
      if (balance - this.spent - this.reserved < costOf(charge)) {
        return {
          kind: "refused",
          http: 429,
          code: 1102,
          message: "resource package used up or expired, or balance not enough",
        };
      }
    }
    const timing = cfg.timing[req.kind];
    const scale = cfg.timing.scale;
    // At least 1 ms per state, so every state is observable and each callback shows its own status.
    const queued = Math.max(1, Math.round(this.prng.between(timing.queuedMs[0], timing.queuedMs[1]) * scale));
    const processing = Math.max(1, Math.round(this.prng.between(timing.processingMs[0], timing.processingMs[1]) * scale));
    const randomFailure = this.prng.chance(cfg.failure.rate);
    const flagged = cfg.failure.marker !== "" && req.prompt.includes(cfg.failure.marker);
    const seq = this.all.length + 1;
    const task: Task = {
      seq,
      id: emulatorTaskId(this.epoch, seq),
      kind: req.kind,
      ...(req.externalId !== undefined ? { externalId: req.externalId } : {}),
      ...(req.callbackUrl !== undefined ? { callbackUrl: req.callbackUrl } : {}),
      watermark: req.watermark,
      createdAt: now,
      processingAt: now + queued,
      endAt: now + queued + processing,
      outcome: req.failWith !== undefined || flagged || randomFailure ? "failed" : "succeeded",
      failMessage: req.failWith !== undefined ? `Task failed: ${req.failWith}` : flagged || randomFailure ? contentRiskMessage : "",
      slots,
      charge,
      ...(req.video ? { video: req.video } : {}),
      ...(image ? { image } : {}),
      ...(req.kind === "image" && req.prompt !== "" ? { caption: req.prompt.slice(0, 200) } : {}),
      ...(req.kind === "image" && req.reference ? { reference: req.reference } : {}),
    };
    this.admit(task);
    this.onTransition({ task, phase: "submitted", at: now });
    return { kind: "created", task };
  }

  /** Keeps a new task: its indexes, its slots and charge held from its creation, its first transition due. */
  private admit(task: Task): void {
    this.all.push(task);
    (task.kind === "video" ? this.videos : this.images).push(task);
    if (task.externalId !== undefined) {
      if (!this.byExternal.has(task.externalId)) this.byExternal.set(task.externalId, task);
      else {
        const later = this.laterByExternal.get(task.externalId);
        if (later) later.push(task);
        else this.laterByExternal.set(task.externalId, [task]);
      }
    }
    this.slots.take(task.kind, task.slots, task.createdAt);
    this.reserved += costOf(task.charge);
    this.byStatus.submitted += 1;
    if (this.firstCreateAt === undefined) this.firstCreateAt = task.createdAt;
    this.events.push({ at: task.processingAt, seq: task.seq, phase: "processing" });
  }

  /** What a later emulator needs to go on with this account's tasks (EmulatorState.ts). */
  saved(): SavedTasks {
    return { epoch: this.epoch, prng: this.prng.position, tasks: this.all };
  }

  /**
   * Takes up the tasks a saved store held, into this empty store: each is admitted at its
   * creation time with the transitions due before it settled first, as when it was
   * created, so slots, balance and counts come out as they were; then everything due at
   * `now` settles. No transition of a restored task is told (onTransition): their
   * callbacks went to a listener of the run before.
   */
  restore(saved: SavedTasks, now: number): void {
    if (this.all.length > 0) throw new Error("TaskStore.restore: the store already holds tasks");
    this.epoch = saved.epoch;
    this.prng = Prng.resume(saved.prng);
    const told = this.onTransition;
    this.onTransition = () => {};
    try {
      for (const task of saved.tasks) {
        this.settle(task.createdAt);
        this.admit(task);
      }
      this.settle(now);
    } finally {
      this.onTransition = told;
    }
  }

  /** Index of the first task in `list` (creation order) with seq greater than `seq`. */
  static indexAfterSeq(list: readonly Task[], seq: number): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first task in `list` created at or after `time`. */
  static indexAtTime(list: readonly Task[], time: number): number {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]!.createdAt < time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
