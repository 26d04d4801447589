// The GitHub Action's steps run as the runner runs them (runAction.ts: env files, bash,
// outputs) in a git checkout with a bare remote, against the emulator over loopback:
// outputs, annotations, the lockfile commit and the exit mapping for a scheduler.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { amountOf, formatAmount, sum } from "../../src/money/Money.js";
import { gitFixture, type GitFixture } from "./gitRepo.js";
import { runAction } from "./runAction.js";
import { readLockFile } from "../../src/state/readLockFile.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
let emu: RunningEmulator;
const t = suite("action.yml steps");

t.before(async () => {
  emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await emu.close();
});

const manifest = (name: string, o: { subjects?: string; extra?: string; clip?: boolean } = {}) => `version: 1
name: ${name}
outputs: out/${name}
concurrency: 4
${o.extra ?? ""}
defaults:
  image: { resolution: 1k }
  video: { resolution: 720p, aspect_ratio: "16:9", duration: 5 }
jobs:
  stills:
    kind: image
    matrix:
      subject: [${o.subjects ?? "apple, boat, chair"}]
    prompt: "a {{ subject }} on a table"
${o.clip ? '  clip:\n    kind: video\n    prompt: "a quiet street"\n    settings: { duration: 5 }\n' : ""}`;

const jobEnv = (extra: Record<string, string> = {}) => ({
  GITHUB_REF: "refs/heads/main",
  GITHUB_REPOSITORY: "acme/batches",
  GITHUB_SERVER_URL: "https://github.com",
  GITHUB_WORKFLOW: "omnibatch spring",
  GITHUB_RUN_ID: "4242",
  OMNIBATCH_BASE_URL: emu.url,
  OMNIBATCH_TIME_SCALE: "0.05",
  ...extra,
});

const withRepo = async (files: Record<string, string>, body: (g: GitFixture) => Promise<void>) => {
  const g = await gitFixture(files);
  try {
    await body(g);
  } finally {
    g.remove();
  }
};

t("all done: green, outputs from the run's summary, reports named for upload, lockfile pushed by the bot naming the run, key masked and nowhere in the files", async () => {
  await withRepo({ "manifests/spring.yaml": manifest("spring", { clip: true }) }, async (g) => {
    const r = await runAction({
      actionPath: repoRoot,
      workspace: g.work,
      inputs: { manifest: "manifests/spring.yaml", "api-key": emu.apiKey },
      env: jobEnv(),
    });
    assert.is(r.exitCode, 0, r.stdout + r.stderr);
    assert.is(r.outputs["outcome"], "done");
    assert.is(r.outputs["pending"], "false");
    assert.is(r.outputs["exit-code"], "0");
    assert.is(r.outputs["created"], "4");
    assert.is(r.outputs["downloaded"], "4");
    assert.is(r.outputs["failed"], "0");
    assert.is(r.outputs["report"], "manifests/out/spring/report.html");
    assert.ok(existsSync(join(g.work, r.outputs["report"]!)));
    assert.equal(r.outputs["reports"]!.split("\n").map((p) => p.split("/").at(-1)).sort(), ["billing.csv", "billing.json", "billing.md", "report.html", "results.jsonl"]);
    assert.is(r.outputs["name"], "spring");
    // The key is masked before anything else could print it, and written to no file.
    assert.match(r.stdout, new RegExp(`^::add-mask::${emu.apiKey}$`, "m"));
    assert.is(r.stdout.split(emu.apiKey).length - 1, 1, "the key appears once, in the add-mask command");
    assert.not.ok(r.stderr.includes(emu.apiKey));
    for (const text of [r.summary, r.envFile, JSON.stringify(r.outputs)]) assert.not.ok(text.includes(emu.apiKey));
    // Upload: the reports, named after the manifest and the run.
    assert.is(r.uploads.length, 1);
    assert.is(r.uploads[0]!.uses, "actions/upload-artifact@v6");
    assert.is(r.uploads[0]!.with["name"], "omnibatch-reports-spring-4242-1");
    assert.is(r.uploads[0]!.with["path"], r.outputs["reports"]);
    // Job summary: the billing report (from the run) and the outcome line (from the step).
    assert.match(r.summary, "### omnibatch: ✅ done");
    // The commit on the remote: the lockfile only, by the bot, naming the run.
    const sha = r.outputs["committed"]!;
    assert.match(sha, /^[0-9a-f]{40}$/);
    assert.is(await g.git(["rev-parse", "main"], g.remote), sha);
    assert.is(await g.git(["log", "-1", "--format=%an <%ae>", "main"], g.remote), "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>");
    const message = await g.git(["log", "-1", "--format=%B", "main"], g.remote);
    assert.match(message, "omnibatch: spring lockfile after omnibatch spring run 4242 (done: 4 created, 4 downloaded, 0 failed)");
    assert.match(message, "https://github.com/acme/batches/actions/runs/4242");
    assert.is(await g.git(["show", "--name-only", "--format=", "main"], g.remote), "manifests/spring.lock.json");
    const pushed = await g.git(["show", "main:manifests/spring.lock.json"], g.remote);
    assert.is(pushed, readFileSync(join(g.work, "manifests/spring.lock.json"), "utf8").trimEnd());
    assert.not.ok(pushed.includes(emu.apiKey));
    // spend: the cash charged, as the lockfile records it (the emulator's account is in USD).
    const charged = sum(
      Object.values((await readLockFile(join(g.work, "manifests/spring.lock.json")))!.tasks)
        .flatMap((x) => x.billing ?? [])
        .filter((b) => b.charge_type === "cash")
        .map((b) => amountOf(b.amount)),
    );
    assert.ok(formatAmount(charged) !== "0", "the tasks were charged");
    assert.is(r.outputs["spend"], `${formatAmount(charged)} USD`);
  });
});

t("exit 3 (max-wait reached with work pending) is a green step with pending=true and a notice; the lockfile is committed and the next run finishes", async () => {
  await withRepo({ "m.yaml": manifest("later") }, async (g) => {
    emu.configure({ timing: { scale: 3 } });
    let first;
    try {
      first = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "m.yaml", "max-wait": "1s", upload: "false" }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
    } finally {
      emu.configure({ timing: { scale: 0.15 } });
    }
    assert.is(first.exitCode, 0, first.stdout + first.stderr);
    assert.is(first.outputs["exit-code"], "3");
    assert.is(first.outputs["outcome"], "pending");
    assert.is(first.outputs["pending"], "true");
    assert.match(first.stdout, /^::notice title=omnibatch%3A pending::omnibatch: work pending/m);
    assert.is(first.uploads.length, 0, "upload: false uploads nothing");
    assert.match(first.outputs["committed"]!, /^[0-9a-f]{40}$/);
    // How many creates fit in the 1 s is the machine's business (none, under heavy load):
    // the subject counts exactly what the committed lockfile records as created.
    const firstLock = (await readLockFile(join(g.work, "m.lock.json")))!;
    const ids = Object.keys(firstLock.tasks);
    assert.is(ids.length, 3, "every task is in the committed lockfile");
    const createdFirst = Object.values(firstLock.tasks).filter((x) => x.task_id !== undefined).length;
    const subject = await g.git(["log", "-1", "--format=%s", "main"], g.remote);
    assert.match(subject, `(pending: ${createdFirst} created, 0 downloaded`, `${subject}\n${first.stdout}`);
    // Like the next scheduled run: it resumes from the pushed lockfile, creating only what
    // was not created, and nothing twice.
    const second = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "m.yaml" }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
    assert.is(second.exitCode, 0, second.stdout + second.stderr);
    assert.is(second.outputs["outcome"], "done");
    assert.ok(Number(second.outputs["created"]) <= 3 - createdFirst, `created ${second.outputs["created"]} after ${createdFirst}`);
    for (const id of ids) assert.is(emu.stats().creates[id], 1, `${id} created exactly once`);
    assert.is(await g.git(["rev-list", "--count", "main"], g.remote), "3");
  });
});

t("failed tasks: red (exit 1) with one error line, a warning at the manifest line of each failed task, and the lockfile still committed", async () => {
  await withRepo({ "m.yaml": manifest("fails", { subjects: "apple, '[fail] boat'" }) }, async (g) => {
    const r = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "m.yaml" }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
    assert.is(r.exitCode, 1, r.stdout + r.stderr);
    assert.is(r.outputs["outcome"], "failed");
    assert.is(r.outputs["failed"], "1");
    const errors = r.stdout.split("\n").filter((l) => l.startsWith("::error"));
    assert.equal(errors, ["::error title=omnibatch%3A failed::omnibatch: 1 task failed or rejected (see the warnings and results.jsonl)"]);
    const m = await loadManifest(join(g.work, "m.yaml"));
    const failedTask = m.tasks.find((x) => JSON.stringify(x.vars).includes("[fail]"))!;
    const warnings = r.stderr.split("\n").filter((l) => l.startsWith("::warning"));
    assert.is(warnings.length, 1, r.stderr);
    assert.ok(
      warnings[0]!.startsWith(`::warning file=m.yaml,line=${failedTask.source.line},col=${failedTask.source.col},title=omnibatch%3A task failed::task ${failedTask.id} (job stills) failed`),
      warnings[0],
    );
    assert.match(r.outputs["committed"]!, /^[0-9a-f]{40}$/);
  });
});

t("an invalid manifest: red (exit 2), the reason in one line, each problem an error annotation at its line; nothing committed", async () => {
  const bad = manifest("bad").replace('prompt: "a {{ subject }} on a table"', "prompt: 42\n    colour: red");
  await withRepo({ "manifests/bad.yaml": bad }, async (g) => {
    const r = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "manifests/bad.yaml" }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
    assert.is(r.exitCode, 2);
    assert.is(r.outputs["outcome"], "invalid");
    assert.is(r.outputs["committed"], "");
    const annotations = r.stderr.split("\n").filter((l) => l.startsWith("::error"));
    assert.equal(annotations, [
      "::error file=manifests/bad.yaml,line=14,col=13,title=omnibatch%3A manifest::jobs.stills.prompt must be a string",
      `::error file=manifests/bad.yaml,line=15,col=5,title=omnibatch%3A manifest::${annotations[1]!.split("::").at(-1)}`,
    ]);
    assert.match(annotations[1]!, "unknown key 'colour'");
    assert.match(
      r.stdout,
      /^::error title=omnibatch%3A invalid::omnibatch: invalid: the manifest is invalid: manifests\/bad\.yaml:14:13: error: jobs\.stills\.prompt must be a string \(2 errors, 0 warnings\)$/m,
    );
    assert.is(await g.git(["rev-list", "--count", "main"], g.remote), "1");
  });
});

t("a refused key is red (exit 5) with the reason; a wrong input value is red (exit 2) before anything runs", async () => {
  await withRepo({ "m.yaml": manifest("refused") }, async (g) => {
    const r = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "m.yaml", "api-key": "sk-wrong-key-0000" }, env: jobEnv() });
    assert.is(r.exitCode, 5, r.stdout + r.stderr);
    assert.is(r.outputs["outcome"], "refused");
    assert.match(r.stdout, /^::error title=omnibatch%3A refused::omnibatch: the account refused/m);
    const bad = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "m.yaml", emulate: "yes" }, env: jobEnv() });
    assert.is(bad.exitCode, 2);
    assert.match(bad.stdout, "::error title=omnibatch::omnibatch: input emulate must be true or false (got 'yes')");
  });
});

t("the budget is red (exit 4) with the reason; commit-lockfile: false leaves the lockfile uncommitted", async () => {
  const extra = "budget: { max: 0.01, currency: USD }\nprices:\n  image: { \"1k\": 0.02 }";
  await withRepo({ "m.yaml": manifest("budget", { extra }), "n.yaml": manifest("nocommit", { subjects: "apple" }) }, async (g) => {
    const r = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "m.yaml" }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
    assert.is(r.exitCode, 4, r.stdout + r.stderr);
    assert.is(r.outputs["outcome"], "budget");
    assert.is(r.outputs["created"], "0");
    assert.match(r.stdout, /^::error title=omnibatch%3A budget::omnibatch: the budget stopped submission/m);
    const kept = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "n.yaml", "commit-lockfile": "false" }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
    assert.is(kept.exitCode, 0, kept.stdout + kept.stderr);
    assert.is(kept.outputs["created"], "1");
    assert.is(kept.outputs["committed"], "");
    assert.ok(existsSync(join(g.work, "n.lock.json")));
    assert.not.match(await g.git(["log", "--format=%s", "main"], g.remote), "nocommit");
  });
});

t("someone pushed meanwhile: the bot's commit is replayed on top and pushed; emulate commits nothing", async () => {
  await withRepo({ "m.yaml": manifest("race"), "README.md": "hello\n" }, async (g) => {
    // Another clone pushes a commit after this checkout was made.
    const other = join(g.root, "other");
    await g.git(["clone", "-q", g.remote, other], g.root);
    writeFileSync(join(other, "README.md"), "changed elsewhere\n");
    await g.git(["commit", "-q", "-am", "elsewhere"], other);
    await g.git(["push", "-q", "origin", "main"], other);
    const r = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "m.yaml" }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
    assert.is(r.exitCode, 0, r.stdout + r.stderr);
    assert.is(await g.git(["log", "--format=%s", "main"], g.remote).then((s) => s.split("\n").slice(1)).then((s) => s.join("|")), "elsewhere|initial");
    assert.match(await g.git(["log", "-1", "--format=%s", "main"], g.remote), "omnibatch: race lockfile after");
    const emulated = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "m.yaml", emulate: "true" }, env: jobEnv() });
    assert.is(emulated.exitCode, 0, emulated.stdout + emulated.stderr);
    assert.is(emulated.outputs["committed"], "");
    assert.match(emulated.stdout, "emulated run: its lockfile is not committed");
    assert.is(await g.git(["rev-list", "--count", "main"], g.remote), "3");
  });
});

t("command plan: the plan and the estimate against the budget in the job summary; over budget is a warning, not red; no key needed", async () => {
  const extra = "budget: { max: 0.05, currency: USD }\nprices:\n  image: { \"1k\": 0.02 }";
  await withRepo({ "m.yaml": manifest("planned", { extra }) }, async (g) => {
    const r = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { command: "plan", manifest: "m.yaml" }, env: jobEnv() });
    assert.is(r.exitCode, 0, r.stdout + r.stderr);
    assert.is(r.outputs["outcome"], "planned");
    assert.is(r.outputs["to-create"], "3");
    assert.is(r.outputs["estimate"], "0.06 USD");
    assert.is(r.outputs["over-budget"], "true");
    assert.match(r.summary, "| estimate, total | 0.06 USD |");
    assert.match(r.summary, "| budget | 0.05 USD |");
    assert.match(r.summary, "**over the budget**");
    assert.match(r.summary, "+ planned-stills-");
    assert.match(r.stdout, "::warning file=m.yaml,title=omnibatch%3A budget::omnibatch: the estimate (0.06 USD) is over the budget (0.05 USD)");
    assert.is(await g.git(["rev-list", "--count", "main"], g.remote), "1");
  });
});

t("two manifests, one per line: one process runs both, exit the worst (1), outputs summed, each lockfile in one bot commit, the summary shows each", async () => {
  // South asks for no request north does (the same one would be paid once and reused: issue 31).
  const files = { "manifests/north.yaml": manifest("north", { clip: true }), "manifests/south.yaml": manifest("south", { subjects: "pear, '[fail] boat'" }) };
  await withRepo(files, async (g) => {
    const r = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "manifests/north.yaml\nmanifests/south.yaml" }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
    assert.is(r.exitCode, 1, r.stdout + r.stderr);
    assert.match(r.stdout, "omnibatch run manifests/north.yaml manifests/south.yaml --max-wait 5h\n");
    assert.is(r.outputs["exit-code"], "1");
    assert.is(r.outputs["outcome"], "failed");
    assert.is(r.outputs["pending"], "false");
    assert.is(r.outputs["created"], "6");
    assert.is(r.outputs["failed"], "1");
    assert.is(r.outputs["name"], "north+south");
    const each = JSON.parse(r.outputs["manifests"]!) as { manifest: string; name: string; outcome: string; "exit-code": number; created: number; lockfile: string; spend: string }[];
    assert.equal(each.map((m) => [m.manifest, m.name, m.outcome, m["exit-code"], m.created, m.lockfile]), [
      ["manifests/north.yaml", "north", "done", 0, 4, "manifests/north.lock.json"],
      ["manifests/south.yaml", "south", "failed", 1, 2, "manifests/south.lock.json"],
    ]);
    // spend: the sum per currency of each manifest's, as their lockfiles record it.
    const cash = async (lock: string) =>
      sum(
        Object.values((await readLockFile(join(g.work, lock)))!.tasks)
          .flatMap((x) => x.billing ?? [])
          .filter((b) => b.charge_type === "cash")
          .map((b) => amountOf(b.amount)),
      );
    const north = await cash("manifests/north.lock.json");
    const south = await cash("manifests/south.lock.json");
    assert.is(each[0]!.spend, `${formatAmount(north)} USD`);
    assert.is(r.outputs["spend"], `${formatAmount(sum([north, south]))} USD`);
    assert.equal(r.outputs["report"]!.split("\n"), ["manifests/out/north/report.html", "manifests/out/south/report.html"]);
    assert.is(r.outputs["reports"]!.split("\n").length, 10);
    assert.is(r.uploads[0]!.with["name"], "omnibatch-reports-north+south-4242-1");
    // One error line, naming the manifest that is red.
    assert.equal(r.stdout.split("\n").filter((l) => l.startsWith("::error")), ["::error title=omnibatch%3A failed::omnibatch: south: 1 task failed or rejected (see the warnings and results.jsonl)"]);
    // The summary: each run's own section, then a row per manifest.
    assert.match(r.summary, "### omnibatch: ❌ failed (2 manifests)");
    assert.match(r.summary, /\| `manifests\/north\.yaml` \(north\) \| ✅ done \| 4 \| 4 \| 0 \| [\d.]+ USD \|/);
    assert.match(r.summary, /\| `manifests\/south\.yaml` \(south\) \| ❌ failed \| 2 \| 1 \| 1 \| [\d.]+ \|$/m, "south charged images only: its spend names no currency (the account's), and joins north's USD in the sum");
    assert.match(r.summary, "- south: 1 task failed or rejected");
    assert.ok(r.summary.split("billing").length > 2, "each run's billing section");
    // Both lockfiles, one commit by the bot, naming each manifest's outcome.
    const sha = r.outputs["committed"]!;
    assert.is(await g.git(["rev-parse", "main"], g.remote), sha);
    assert.equal((await g.git(["show", "--name-only", "--format=", "main"], g.remote)).split("\n").sort(), ["manifests/north.lock.json", "manifests/south.lock.json"]);
    const message = await g.git(["log", "-1", "--format=%B", "main"], g.remote);
    assert.match(message, "omnibatch: lockfiles of north, south after omnibatch spring run 4242 (failed)");
    assert.match(message, "north: done: 4 created, 4 downloaded, 0 failed\nsouth: failed: 2 created, 1 downloaded, 1 failed");
    for (const lock of ["manifests/north.lock.json", "manifests/south.lock.json"]) {
      assert.is(await g.git(["show", `main:${lock}`], g.remote), readFileSync(join(g.work, lock), "utf8").trimEnd());
    }
  });
});

t("a glob, expanded inside the repository: both run green; one matching nothing, or reaching outside, is red (exit 2) naming it, nothing sent", async () => {
  const files = { "manifests/one.yaml": manifest("one", { subjects: "apple" }), "manifests/two.yaml": manifest("two", { subjects: "boat" }), "manifests/notes.md": "not a manifest\n" };
  await withRepo(files, async (g) => {
    const r = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "manifests/*.yaml" }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
    assert.is(r.exitCode, 0, r.stdout + r.stderr);
    assert.match(r.stdout, "omnibatch run manifests/one.yaml manifests/two.yaml --max-wait 5h\n");
    assert.is(r.outputs["outcome"], "done");
    assert.is(r.outputs["created"], "2");
    assert.equal((JSON.parse(r.outputs["manifests"]!) as { lockfile: string }[]).map((m) => m.lockfile), ["manifests/one.lock.json", "manifests/two.lock.json"]);
    assert.match(r.stdout, "omnibatch: 2 manifests: one done, two done");
    assert.match(r.summary, "### omnibatch: ✅ done (2 manifests)");
    assert.equal((await g.git(["show", "--name-only", "--format=", "main"], g.remote)).split("\n").sort(), ["manifests/one.lock.json", "manifests/two.lock.json"]);
    const before = await g.git(["rev-list", "--count", "main"], g.remote);
    const creates = Object.keys(emu.stats().creates).length;
    for (const [pattern, says] of [
      ["manifests/*.yml", "the pattern 'manifests/*.yml' matches no file in the repository"],
      ["../*.yaml", "the pattern '../*.yaml' reaches outside the repository"],
      [`${g.root}/*/manifests/*.yaml`, `the pattern '${g.root}/*/manifests/*.yaml' reaches outside the repository`],
    ] as const) {
      const bad = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: `manifests/one.yaml ${pattern}` }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
      assert.is(bad.exitCode, 2, bad.stdout + bad.stderr);
      assert.is(bad.outputs["outcome"], "invalid");
      assert.match(bad.stdout, `::error title=omnibatch::omnibatch: input manifest: ${says}`);
      assert.not.match(bad.stdout, "omnibatch run ", "nothing ran");
    }
    assert.is(Object.keys(emu.stats().creates).length, creates);
    assert.is(await g.git(["rev-list", "--count", "main"], g.remote), before);
  });
});

t("one invalid manifest among two: red (exit 2) before anything is sent for either, the problem an annotation at its line; nothing committed", async () => {
  const bad = manifest("broken").replace('prompt: "a {{ subject }} on a table"', "prompt: 42");
  await withRepo({ "good.yaml": manifest("good", { subjects: "kettle, lamp" }), "broken.yaml": bad }, async (g) => {
    const creates = Object.keys(emu.stats().creates).length;
    const r = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { manifest: "good.yaml broken.yaml" }, env: jobEnv({ OMNIBATCH_API_KEY: emu.apiKey }) });
    assert.is(r.exitCode, 2, r.stdout + r.stderr);
    assert.is(r.outputs["outcome"], "invalid");
    assert.is(r.outputs["exit-code"], "2");
    assert.is(r.outputs["committed"], "");
    assert.is(Object.keys(emu.stats().creates).length, creates, "nothing created for either");
    assert.not.ok(existsSync(join(g.work, "good.lock.json")));
    assert.match(r.stderr, "::error file=broken.yaml,line=14,col=13,title=omnibatch%3A manifest::jobs.stills.prompt must be a string");
    assert.match(r.stdout, /^::error title=omnibatch%3A invalid::omnibatch: invalid: the manifest is invalid: broken\.yaml:14:13: error: jobs\.stills\.prompt must be a string/m);
    assert.match(r.summary, "### omnibatch: ❌ invalid (`good.yaml`, `broken.yaml`)");
    assert.is(await g.git(["rev-list", "--count", "main"], g.remote), "1");
  });
});

t("command plan with two manifests: each plan in the summary, to-create and the estimate summed, over-budget when one is", async () => {
  const prices = "prices:\n  image: { \"1k\": 0.02 }";
  const files = { "m/a.yaml": manifest("a", { extra: `budget: { max: 0.01, currency: USD }\n${prices}` }), "m/b.yaml": manifest("b", { subjects: "apple", extra: `budget: { max: 5, currency: USD }\n${prices}` }) };
  await withRepo(files, async (g) => {
    const r = await runAction({ actionPath: repoRoot, workspace: g.work, inputs: { command: "plan", manifest: "m/*.yaml" }, env: jobEnv() });
    assert.is(r.exitCode, 0, r.stdout + r.stderr);
    assert.is(r.outputs["outcome"], "planned");
    assert.is(r.outputs["to-create"], "4");
    assert.is(r.outputs["estimate"], "0.08 USD");
    assert.is(r.outputs["over-budget"], "true");
    assert.match(r.summary, "### omnibatch plan: `m/a.yaml`");
    assert.match(r.summary, "### omnibatch plan: `m/b.yaml`");
    assert.match(r.summary, "+ a-stills-");
    assert.match(r.summary, "+ b-stills-");
    assert.equal(r.stdout.split("\n").filter((l) => l.startsWith("::warning")), ["::warning file=m/a.yaml,title=omnibatch%3A budget::omnibatch: the estimate (0.06 USD) is over the budget (0.01 USD)"]);
  });
});

t.run();
