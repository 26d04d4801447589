// `--max-wait` durations: 90s, 25m, 2h, 500ms are read; nonsense is rejected.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseDuration } from "../../src/cli/commands/run.js";

test("--max-wait durations: 90s, 25m, 2h, 500ms; nonsense is rejected", () => {
  assert.is(parseDuration("90s"), 90_000);
  assert.is(parseDuration("25m"), 1_500_000);
  assert.is(parseDuration("2h"), 7_200_000);
  assert.is(parseDuration("500ms"), 500);
  assert.is(parseDuration("soon"), undefined);
});

test.run();
