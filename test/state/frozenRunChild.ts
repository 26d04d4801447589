// A run in its own process, for frozenRun.test.ts: runs the test manifest named on the
// command line against the given service with a short run-lock stale limit, and prints
// its summary (or error) as one JSON line.

import { makePolicy } from "../../src/policy/Policy.js";
import { runLoadedManifest } from "../../src/run/runLoadedManifest.js";
import { testManifest } from "../engine/testManifest.js";

const [dir, name, baseUrl, apiKey, staleMs] = process.argv.slice(2);
const manifest = testManifest(dir!, { name: name!, concurrency: 2, tasks: Array.from({ length: 4 }, (_, i) => ({ job: "clips", kind: "video" as const, prompt: `clip ${i}` })) });
try {
  const summary = await runLoadedManifest(manifest, {
    baseUrl: baseUrl!,
    env: { OMNIBATCH_API_KEY: apiKey! },
    policy: makePolicy(0.05),
    reports: false,
    callbacks: false,
    // A heartbeat well inside the stale limit, as by default, but not due the moment the
    // run thaws: what decides is the check before each create, not the heartbeat's luck.
    lockStore: { staleMs: Number(staleMs), heartbeatMs: Math.floor(Number(staleMs) * 0.8) },
  });
  console.log(JSON.stringify({ exitCode: summary.exitCode, created: summary.created }));
  process.exit(summary.exitCode);
} catch (error) {
  console.log(JSON.stringify({ error: (error as { _tag?: string })._tag, message: (error as Error).message }));
  process.exit(9);
}
