// Preloaded (`node --import`) by test/cli/startupImports.test.ts into the built CLI: writes
// the URL of every ES module the process loads, and at exit the path of every CommonJS
// file it required, one a line, to the file named by OMNIBATCH_LOAD_LOG. Nothing else
// changes: the CLI's own output and exit code are as without it.
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const log = process.env.OMNIBATCH_LOAD_LOG;
if (log) {
  // The load hook runs on Node's loader thread; it appends each URL as it is loaded.
  const hook = `
    import { appendFileSync } from "node:fs";
    export async function load(url, context, next) {
      appendFileSync(${JSON.stringify(log)}, url + "\\n");
      return next(url, context);
    }`;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
  const cache = createRequire(import.meta.url).cache;
  process.on("exit", () => appendFileSync(log, Object.keys(cache).map((p) => `${p}\n`).join("")));
}
