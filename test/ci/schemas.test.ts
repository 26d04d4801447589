// action.yml and the example workflows (and the one `init` writes) against the published
// JSON schemas GitHub's editors use: SchemaStore's github-action.json and
// github-workflow.json, vendored in test/ci/schemas/ (README there names the source).

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { parse } from "yaml";
import { scheduledWorkflow } from "../../src/cli/init/templates.js";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const schema = (name: string) => JSON.parse(readFileSync(here(`schemas/${name}`), "utf8")) as object;
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const validateAction = ajv.compile(schema("github-action.json"));
const validateWorkflow = ajv.compile(schema("github-workflow.json"));
const yamlOf = (path: string) => parse(readFileSync(here(path), "utf8")) as unknown;
const problems = (v: { errors?: unknown }) => JSON.stringify(v.errors, null, 1);

const t = suite("GitHub schemas");

t("the vendored schemas reject what they should (a check that can fail)", () => {
  assert.not.ok(validateAction({ name: "x", description: "y", runs: { using: "composite", steps: [{ run: "echo" }] } }), "a composite run step needs a shell");
  assert.not.ok(validateWorkflow({ on: "push", jobs: { a: { "runs-on": "ubuntu-latest", steps: [{ uses: "x@v1", run: "y" }] } } }), "a step is uses or run");
  assert.not.ok(validateWorkflow({ on: "push", jobz: {} }));
});

t("action.yml is a valid action (SchemaStore github-action.json)", () => {
  const action = yamlOf("../../action.yml");
  assert.ok(validateAction(action), problems(validateAction));
});

for (const file of ["scheduled.yml", "scheduled-several.yml", "plan-on-pull-request.yml"]) {
  t(`examples/github/${file} is a valid workflow (SchemaStore github-workflow.json)`, () => {
    const workflow = yamlOf(`../../examples/github/${file}`);
    assert.ok(validateWorkflow(workflow), problems(validateWorkflow));
  });
}

t("the workflow init writes is a valid workflow, with a schedule, concurrency, Node 22 and the action", () => {
  const workflow = parse(scheduledWorkflow({ manifest: "batches/a b.yaml", name: "ab", outputs: "batches/outputs/ab" })) as {
    on: { schedule: { cron: string }[] };
    concurrency: { group: string; "cancel-in-progress": boolean };
    jobs: { run: { steps: { uses?: string; with?: Record<string, unknown> }[] } };
  };
  assert.ok(validateWorkflow(workflow), problems(validateWorkflow));
  assert.is(workflow.on.schedule.length, 1);
  assert.equal(workflow.concurrency, { group: "omnibatch-ab", "cancel-in-progress": false });
  const steps = workflow.jobs.run.steps;
  assert.is(steps.find((s) => s.uses?.startsWith("actions/setup-node@"))?.with?.["node-version"], 22);
  assert.equal(steps.find((s) => s.uses === "./node_modules/omnibatch")?.with?.["manifest"], "batches/a b.yaml");
  assert.equal(steps.find((s) => s.uses?.startsWith("actions/cache@"))?.with?.["path"], "batches/outputs/ab");
});

t("every action the examples use runs on a Node 24 runtime release (checkout v5, setup-node v5, cache v5, upload-artifact v6)", () => {
  const texts = ["../../action.yml", "../../examples/github/scheduled.yml", "../../examples/github/scheduled-several.yml", "../../examples/github/plan-on-pull-request.yml"].map((p) => readFileSync(here(p), "utf8"));
  const uses = texts.flatMap((text) => [...text.matchAll(/uses: (actions\/[\w-]+)@(v\d+)/g)].map((m) => `${m[1]}@${m[2]}`));
  assert.ok(uses.length >= 5);
  const minimum: Record<string, number> = { "actions/checkout": 5, "actions/setup-node": 5, "actions/upload-artifact": 6, "actions/cache": 5 };
  for (const u of uses) {
    const [name, version] = u.split("@v");
    assert.ok(minimum[name!] !== undefined && Number(version) >= minimum[name!]!, u);
  }
});

t.run();
