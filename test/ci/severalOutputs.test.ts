// The step outputs of several manifests (src/ci/severalOutputs.ts): spend summed per
// currency and never across, the worst manifest chosen as the step's outcome.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { sumSpend, worstRun, type ManifestRun } from "../../src/ci/severalOutputs.js";
import { stepResult } from "../../src/ci/stepResult.js";

const t = suite("several manifests' outputs");

t("spend: summed per currency, never across; the unnamed currency joins the one named currency, else stays apart", () => {
  assert.equal(sumSpend([{ USD: "0.10" }, { USD: "0.25" }, undefined, {}]), { USD: "0.35" });
  assert.equal(sumSpend([{ USD: "0.1" }, { CNY: "2" }]), { CNY: "2", USD: "0.1" });
  assert.equal(sumSpend([{ USD: "0.352" }, { "": "0.024" }]), { USD: "0.376" });
  assert.equal(sumSpend([{ "": "0.1" }, { "": "0.2" }]), { "": "0.3" });
  assert.equal(sumSpend([{ USD: "1" }, { CNY: "2" }, { "": "0.5" }]), { "": "0.5", CNY: "2", USD: "1" }, "two named currencies: the unnamed one cannot be told");
});

t("the worst manifest: the first with the step's exit code, else the first red, else the first", () => {
  const run = (manifest: string, exitCode: number): ManifestRun => ({ manifest, exitCode, result: stepResult(exitCode, undefined, "") });
  assert.is(worstRun([run("a", 0), run("b", 3), run("c", 1)], 1).manifest, "c");
  assert.is(worstRun([run("a", 3), run("b", 0)], 3).manifest, "a");
  assert.is(worstRun([run("a", 0), run("b", 4)], 70).manifest, "b");
  assert.is(worstRun([run("a", 0), run("b", 0)], 0).manifest, "a");
});

t.run();
