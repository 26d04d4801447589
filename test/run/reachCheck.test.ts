// Whether a run asks first that its address answers at all (src/run/reachCheck.ts), and
// what the asking gives: pure where it decides, against real sockets where it asks (a
// closed loopback port, the emulator).

import { createServer } from "node:net";
import { Effect, Redacted } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { OmniClient } from "../../src/api/OmniClient.js";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { askReach, mustCheckReach, reachCheck, ServiceUnreachable } from "../../src/run/reachCheck.js";
import type { LockTask, TaskState } from "../../src/state/LockFile.js";
import { task, taskId } from "../state/lockTask.js";

const records = (states: readonly TaskState[], abandoned = false): Map<string, LockTask> =>
  new Map(
    states.map((state, i) => [
      taskId(i),
      task(i, { state, ...(state === "planned" ? {} : { task_id: `t${i}` }), ...(abandoned ? { abandoned: { service: "https://old.example.com", at: 1 } } : {}) }),
    ]),
  );

/** A loopback port nothing listens on: bound, noted, closed. */
const closedPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

const withClient = <A>(baseUrl: string, apiKey: string, use: (client: OmniClient["Type"]) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(OmniClient.make({ baseUrl, apiKey: Redacted.make(apiKey), timeoutMs: 5_000 }), use)) as Effect.Effect<A>);

test("mustCheckReach: asked when there is something to create and nothing unfinished at the service", () => {
  assert.is(mustCheckReach(new Map(), ["a"]), true, "a new lockfile");
  assert.is(mustCheckReach(records(["planned", "rejected"]), [taskId(0), taskId(1)]), true);
  assert.is(mustCheckReach(records(["downloaded", "failed"]), [taskId(0), taskId(1), "new-task"]), true, "a new task among finished ones");
  for (const state of ["submitting", "submitted", "processing", "succeeded"] as const) {
    assert.is(mustCheckReach(records(["planned", state]), [taskId(0), taskId(1)]), false, `${state}: a lost connection is waited out`);
  }
  assert.is(mustCheckReach(records(["planned", "submitted"], true), [taskId(0)]), true, "abandoned at another service: nothing of this run's there");
  assert.is(mustCheckReach(records(["downloaded", "failed"]), [taskId(0), taskId(1)]), false, "nothing to create: nothing asked");
});

test("askReach: a closed loopback port is unreachable within seconds; the emulator answers, a wrong key too", async () => {
  const port = await closedPort();
  const started = Date.now();
  const dead = await withClient(`http://127.0.0.1:${port}`, "k", askReach);
  assert.is(dead._tag, "unreachable");
  assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
  const emu = await startEmulator({}, { port: 0 });
  try {
    assert.equal(await withClient(emu.url, emu.apiKey, askReach), { _tag: "answered" });
    const wrongKey = await withClient(emu.url, "not-the-key", askReach);
    assert.is(wrongKey._tag, "answered");
    assert.is(wrongKey._tag === "answered" ? wrongKey.error?._tag : undefined, "ServiceError");
    assert.is(emu.stats().tasks.total, 0);
  } finally {
    await emu.close();
  }
});

test("reachCheck fails with ServiceUnreachable naming the address (a line, no key) only when it must ask", async () => {
  const port = await closedPort();
  const address = `http://127.0.0.1:${port}`;
  const failed = await withClient(address, "sk-secret-key", (c) => Effect.either(reachCheck(c, address, new Map(), ["a"])));
  assert.is(failed._tag, "Left");
  const error = failed._tag === "Left" ? failed.left : undefined;
  assert.instance(error, ServiceUnreachable);
  assert.match(error!.message, `nothing answers at ${address}`);
  assert.match(error!.message, "--base-url");
  assert.not.match(error!.message, "sk-secret-key");
  assert.not.match(error!.message, "\n");
  const waited = await withClient(address, "k", (c) => Effect.either(reachCheck(c, address, records(["submitted"]), [taskId(0)])));
  assert.is(waited._tag, "Right", "a task at the service: no check, the run waits the connection out");
});

test.run();
