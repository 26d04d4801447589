// Names, superseded and orphaned tasks, and prune, as a user meets them: the built CLI
// against the emulator (`--emulate`), the real file system. A job's `name` template names
// the files; plan shows the files a run then really writes; a changed prompt supersedes
// tasks (recorded in the lockfile), a removed matrix value orphans them; status, results.jsonl
// and the report count the current ones; prune lists, then removes with --yes, and the
// spend to date stays the same.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execa } from "execa";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readLockFile } from "../../src/state/readLockFile.js";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));

const manifest = (prompt: string, products: string) => `version: 1
name: sp
outputs: out
prices: { currency: USD, image: { "1k": 0.03 } }
jobs:
  stills:
    kind: image
    matrix:
      product: [${products}]
      style: [studio, street]
    name: "{{ product.sku }}-{{ style }}"
    prompt: "${prompt} {{ product.title }}, {{ style }} light"
`;
const both = '{ sku: A-1, title: mug }, { sku: B-2, title: cup }';

const cli = (dir: string, args: string[]) =>
  execa("node", [bin, ...args], { cwd: dir, reject: false, timeout: 120_000, env: { OMNIBATCH_API_KEY: "" } });

const json = <T>(text: string): T => JSON.parse(text) as T;
type Plan = { entries: { mark: string; id: string; files?: string[]; supersededBy?: string }[] };
type Result = { id: string; standing: string; superseded_by?: string; request?: { prompt: string }; outputs: { path?: string }[] };
const lockPath = (dir: string) => join(dir, "m.emulate.lock.json");
const out = (dir: string) => join(dir, "out-emulated");
const results = (dir: string): Result[] =>
  readFileSync(join(out(dir), "results.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as Result);
const recordedPaths = async (dir: string, ids: readonly string[]): Promise<string[]> => {
  const lock = (await readLockFile(lockPath(dir)))!;
  return ids.flatMap((id) => lock.tasks[id]!.outputs.map((o) => o.path!)).sort();
};

test("names, plan's files, superseded and orphaned tasks, status, reports and prune, end to end", async () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-prune-"));
  try {
    const file = join(dir, "m.yaml");
    writeFileSync(file, manifest("a photo of a", both));

    // 1. Plan shows the files the run then writes, named by the template.
    const plan1 = json<Plan>((await cli(dir, ["plan", "m.yaml", "--emulate", "--json"])).stdout);
    const planned1 = plan1.entries.flatMap((e) => e.files ?? []).sort();
    assert.equal(planned1, [
      "stills/A-1_street/A-1-street-1.png",
      "stills/A-1_studio/A-1-studio-1.png",
      "stills/B-2_street/B-2-street-1.png",
      "stills/B-2_studio/B-2-studio-1.png",
    ]);
    const ran1 = await cli(dir, ["run", "m.yaml", "--emulate", "--quiet"]);
    assert.is(ran1.exitCode, 0, ran1.all ?? ran1.stderr);
    assert.equal(await recordedPaths(dir, plan1.entries.map((e) => e.id)), planned1, "plan's files are the run's");
    for (const p of planned1) assert.ok(existsSync(join(out(dir), p)), p);

    // 2. A changed prompt (~) for what stays, a removed product (-): plan names both, and the
    //    changed tasks' files go to folders of their own, as plan says.
    writeFileSync(file, manifest("a studio shot of a", "{ sku: A-1, title: mug }"));
    const plan2 = json<Plan>((await cli(dir, ["plan", "m.yaml", "--emulate", "--json"])).stdout);
    const changed = plan2.entries.filter((e) => e.mark === "~");
    assert.is(changed.length, 2);
    const planned2 = changed.flatMap((e) => e.files ?? []).sort();
    assert.is(planned2.length, 2);
    for (const p of planned2) assert.match(p, /^stills\/A-1_(studio|street)-[a-z2-7]{6}\/A-1-(studio|street)-1\.png$/);
    const text2 = (await cli(dir, ["plan", "m.yaml", "--emulate"])).stdout;
    assert.match(text2, /- sp-stills-[a-z2-7]{20}  stills\/B-2_studio  \(downloaded, orphaned: no longer in the manifest\)/);
    const ran2 = await cli(dir, ["run", "m.yaml", "--emulate", "--quiet"]);
    assert.is(ran2.exitCode, 0, ran2.all ?? ran2.stderr);
    assert.equal(await recordedPaths(dir, changed.map((e) => e.id)), planned2, "plan's files are the run's, suffixed folders included");

    // 3. The lockfile records which task superseded which.
    const lock = (await readLockFile(lockPath(dir)))!;
    const superseded = Object.entries(lock.tasks).filter(([, t]) => t.superseded_by !== undefined);
    assert.is(superseded.length, 2);
    for (const [, t] of superseded) assert.ok(changed.some((c) => c.id === t.superseded_by), t.superseded_by);
    assert.match(readFileSync(lockPath(dir), "utf8"), /"superseded_by":"sp-stills-/);

    // 4. status counts current tasks (orphans marked), superseded apart; --all counts all.
    const status = await cli(dir, ["status", "m.yaml", "--emulate"]);
    assert.is(status.exitCode, 0, status.stderr);
    assert.match(status.stdout, /sp: 4 current tasks in m\.emulate\.lock\.json/);
    assert.match(status.stdout, /Superseded \(2\): replaced by a changed task \(~\); not counted above/);
    assert.match(status.stdout, /Orphaned \(2\): no longer in the manifest \(-\); counted above/);
    const all = json<{ tasks: number; superseded: unknown[]; orphaned: unknown[] }>(
      (await cli(dir, ["status", "m.yaml", "--emulate", "--all", "--json"])).stdout,
    );
    assert.equal([all.tasks, all.superseded.length, all.orphaned.length], [6, 2, 2]);

    // 5. results.jsonl: standing per line; tasks out of the manifest keep the request that made them.
    const lines = results(dir);
    assert.equal(lines.map((l) => l.standing).sort(), ["current", "current", "orphaned", "orphaned", "superseded", "superseded"]);
    for (const l of lines) assert.ok(l.request?.prompt, `${l.id} (${l.standing}) keeps its request`);
    assert.match(lines.find((l) => l.standing === "superseded")!.request!.prompt, /^a photo of a mug/);
    assert.is(readFileSync(join(out(dir), "stills", "metadata.jsonl"), "utf8").trimEnd().split("\n").length, 4, "current and orphaned files only");

    const billing = () => json<{ tasks: number; cash: { charged: string }[] }>(readFileSync(join(out(dir), "billing.json"), "utf8"));
    const spentLine = (text: string) => /Spent: ([^\n(]+)/.exec(text)?.[1]?.trim();
    const spentBefore = billing();
    assert.is(spentBefore.tasks, 6);
    assert.ok(Number(spentBefore.cash[0]!.charged) > 0);
    const statusSpent = spentLine(status.stdout);
    assert.ok(statusSpent, status.stdout);

    // 6. prune without --yes lists and changes nothing.
    const oldFiles = lines.filter((l) => l.standing !== "current").flatMap((l) => l.outputs.map((o) => o.path!));
    const dry = await cli(dir, ["prune", "m.yaml", "--emulate"]);
    assert.is(dry.exitCode, 0, dry.stderr);
    assert.match(dry.stdout, /Would remove 4 task\(s\) \(2 superseded, 2 orphaned\): 8 file\(s\)/);
    for (const p of oldFiles) assert.ok(existsSync(join(out(dir), p)), p);

    // 7. A run holding the lock: prune refuses (exit 2) and removes nothing.
    mkdirSync(`${lockPath(dir)}.running`);
    writeFileSync(join(`${lockPath(dir)}.running`, "owner.json"), JSON.stringify({ pid: process.pid, host: "here", started: Date.now(), token: "t" }));
    const busy = await cli(dir, ["prune", "m.yaml", "--emulate", "--yes"]);
    assert.is(busy.exitCode, 2, busy.stdout);
    for (const p of oldFiles) assert.ok(existsSync(join(out(dir), p)), p);
    rmSync(`${lockPath(dir)}.running`, { recursive: true });

    // 8. prune --yes removes their files, sidecars, folders and records; spend stays.
    const yes = await cli(dir, ["prune", "m.yaml", "--emulate", "--yes"]);
    assert.is(yes.exitCode, 0, yes.stderr + yes.stdout);
    assert.match(yes.stdout, /Removed 4 task\(s\): 8 file\(s\)/);
    for (const p of oldFiles) assert.not.ok(existsSync(join(out(dir), p.split("/").slice(0, -1).join("/"))), `${p}'s folder is gone`);
    const after = results(dir);
    assert.equal(after.map((l) => l.standing), ["current", "current"]);
    // Spend to date never goes down: the pruned tasks' charges stay in the billing history.
    assert.equal(billing().cash, spentBefore.cash);
    assert.is(billing().tasks, 6);
    const pruned = Object.values((await readLockFile(lockPath(dir)))!.tasks).filter((t) => t.pruned_at !== undefined);
    assert.is(pruned.length, 4, "their lines stay, marked pruned");
    const statusAfter = await cli(dir, ["status", "m.yaml", "--emulate"]);
    assert.match(statusAfter.stdout, /Pruned: 4 task\(s\)/);
    assert.not.match(statusAfter.stdout, /Superseded|Orphaned/);
    assert.is(spentLine(statusAfter.stdout), statusSpent, "status's spend to date is unchanged");
    const again = await cli(dir, ["prune", "m.yaml", "--emulate"]);
    assert.match(again.stdout, /Nothing to prune/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
