// The validators compiled ahead of time from the JSON Schemas (scripts/compileSchemas.mjs)
// must be those of the schemas as committed: a schema edited without recompiling fails here.

import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";

const root = fileURLToPath(new URL("../..", import.meta.url));

test("every compiled schema module is up to date with its schema", () => {
  let output = "";
  let ok = true;
  try {
    execFileSync(process.execPath, ["scripts/compileSchemas.mjs", "--check"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    ok = false;
    output = String((error as { stderr?: string }).stderr ?? error);
  }
  assert.ok(ok, output);
});

test.run();
