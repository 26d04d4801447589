// The baseline the saturation benchmark compares against: what common SDK examples do.
// Up to `concurrency` tasks at once; each is created, then polled on its own
// (GET /tasks?task_ids=<one id>) every `pollMs`; when it ends its video is downloaded and
// the next task is created. A 1303 ("no slot") waits one interval and tries again.

export interface NaivePollerOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly prompts: readonly string[];
  readonly concurrency: number;
  readonly pollMs: number;
  /** Gives up on the whole run after this long (a bound on every loop). */
  readonly timeoutMs: number;
}

export interface NaivePollerResult {
  readonly wallMs: number;
  readonly finished: number;
  readonly failed: number;
}

interface Envelope<T> {
  readonly code: number;
  readonly message: string;
  readonly data?: T;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export const runNaivePoller = async (o: NaivePollerOptions): Promise<NaivePollerResult> => {
  const started = performance.now();
  const stopAt = Date.now() + o.timeoutMs;
  const headers = { authorization: `Bearer ${o.apiKey}`, "content-type": "application/json" };
  const call = async <T>(method: string, url: string, body?: unknown): Promise<Envelope<T>> => {
    const res = await fetch(url, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return (await res.json()) as Envelope<T>;
  };
  let next = 0;
  let finished = 0;
  let failed = 0;

  const one = async (i: number) => {
    const body = {
      contents: [{ type: "prompt", text: o.prompts[i] }],
      settings: { resolution: "720p", aspect_ratio: "16:9", duration: 5 },
      options: { external_task_id: `naive-${i}` },
    };
    let id: string | undefined;
    while (id === undefined) {
      if (Date.now() > stopAt) throw new Error("naive poller: time limit");
      const r = await call<{ id: string }>("POST", `${o.baseUrl}/omni-video/kling-o1`, body);
      if (r.code === 0 && r.data) id = r.data.id;
      else if (r.code === 1303 || r.code === 1302) await sleep(o.pollMs);
      else throw new Error(`naive poller: create answered ${r.code} ${r.message}`);
    }
    for (;;) {
      if (Date.now() > stopAt) throw new Error("naive poller: time limit");
      await sleep(o.pollMs);
      const r = await call<Array<{ status: string; outputs?: Array<{ type: string; url?: string }> }>>(
        "GET",
        `${o.baseUrl}/tasks?task_ids=${encodeURIComponent(id)}`,
      );
      const task = r.data?.[0];
      if (task?.status === "failed") {
        failed++;
        return;
      }
      if (task?.status === "succeeded") {
        for (const out of task.outputs ?? []) {
          if (out.type !== "video" || !out.url) continue;
          const res = await fetch(out.url);
          await res.arrayBuffer();
        }
        finished++;
        return;
      }
    }
  };

  const worker = async () => {
    while (next < o.prompts.length) await one(next++);
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  return { wallMs: performance.now() - started, finished, failed };
};
