// A job with a mistake found when compiling (an unknown name in a template, a bad
// for_each) is not expanded: its tasks would repeat that mistake once each. Its other
// template mistakes (a misspelt field of a data row: `{{ product.nme }}`) would then show
// only once the first is fixed. Here they are found at once: every template of the job is
// filled for each of its matrix combinations, and each problem but an unknown first name
// (reported when compiling) is reported at its place, as expansion would. Pure.

import { describeVars } from "./outputFolder.js";
import { expandMatrix } from "./expandMatrix.js";
import { templatesOf } from "./compileManifest.js";
import type { DiagnosticSink } from "./Locator.js";
import type { JobSpec, ManifestSpec } from "./ManifestSpec.js";
import { render, type Scope } from "./Template.js";

export const checkInvalidJobTemplates = (spec: ManifestSpec, job: JobSpec, sink: DiagnosticSink): void => {
  const templates = templatesOf(job);
  if (templates.length === 0) return;
  for (const combo of expandMatrix(job.axes, job.include, job.exclude)) {
    const values = combo.values;
    const scope: Scope = (n) => (n in values ? values[n] : n === "vars" ? spec.vars : spec.vars[n]);
    const names = () => [...new Set(["vars", ...Object.keys(spec.vars), ...Object.keys(values)])];
    for (const v of templates) {
      const r = render(v.template!, scope, names);
      if (r.ok) continue;
      for (const problem of r.problems) {
        if (scope(problem.path[0]!) === undefined) continue;
        sink.add({ path: v.path, textOffset: problem.offset }, problem.message, "error", () => (Object.keys(values).length ? describeVars(values) : undefined));
      }
    }
  }
};
