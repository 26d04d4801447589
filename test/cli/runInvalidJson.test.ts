// `run --json` on an invalid manifest: every problem is an NDJSON `diagnostic` event on
// stdout (stdout holds nothing else), the usual report goes to stderr, exit 2.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execa } from "execa";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));
const invalidDir = fileURLToPath(new URL("../fixtures/manifests/invalid", import.meta.url));

test("run --json on an invalid manifest prints its diagnostics as events and exits 2", async () => {
  const r = await execa("node", [bin, "run", "unknown-top-key.yaml", "--json"], { cwd: invalidDir, reject: false, env: { OMNIBATCH_API_KEY: "" } });
  assert.is(r.exitCode, 2);
  const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.is(events.length, 1);
  assert.equal(
    { ...events[0], at: undefined },
    { type: "diagnostic", at: undefined, severity: "error", file: "unknown-top-key.yaml", line: 6, col: 1, message: "unknown key 'job' in the manifest (did you mean 'jobs'?)" },
  );
  assert.ok(!Number.isNaN(Date.parse(String(events[0]!.at))), "each event carries a timestamp");
  assert.match(r.stderr, "unknown-top-key.yaml:6:1: error:");
});

test.run();
