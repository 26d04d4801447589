// What an earlier results.jsonl said made a task is carried over for tasks the manifest
// no longer makes: only the wanted lines are read, damaged lines are skipped.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { earlierRecords } from "../../src/report/resultsJsonl.js";

const line = (id: string, prompt: string) =>
  JSON.stringify({ id, job: "a", source: "m.yaml:3:3", request: { prompt, settings: {}, options: {}, inputs: [] }, estimate: { currency: "USD", amount: "0.03" }, state: "downloaded" });

test("request, source and estimate of the wanted tasks; other, damaged and request-less lines skipped", () => {
  const text = [line("t-1", "one"), "{not json", line("t-2", "two"), JSON.stringify({ id: "t-3", state: "planned" }), ""].join("\n");
  const all = earlierRecords(text);
  assert.equal([...all.keys()], ["t-1", "t-2"]);
  assert.equal(all.get("t-1"), { request: { prompt: "one", settings: {}, options: {}, inputs: [] }, source: "m.yaml:3:3", estimate: { currency: "USD", amount: "0.03" } });
  const some = earlierRecords(text, new Set(["t-2", "t-3"]));
  assert.equal([...some.keys()], ["t-2"]);
  assert.is(some.get("t-2")!.request!.prompt, "two");
});

test.run();
