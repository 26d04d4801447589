// Plan files are read and written with the rules of data files (the built CLI): `plan
// --out` writes a new file or over a regular one only (a symbolic link, a FIFO, a device
// or a missing folder is refused, exit 2, and left as it was); `run --plan` reads a
// regular file only, bounded (a FIFO never blocks, /dev/zero is not read). Everything in
// a temp folder: no system file is written (the device case is /dev/zero, only read).

import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, readlinkSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { MAX_PLAN_BYTES } from "../../src/plan/savedPlan.js";
import { bin, workspace, type Workspace } from "./runFixture.js";
import { selectYaml } from "./selectFixture.js";

const t = suite<{ ws: Workspace }>("plan files", {} as never);
t.before((ctx) => {
  ctx.ws = workspace(selectYaml("planfiles"));
  writeFileSync(join(ctx.ws.dir, "products.csv"), "sku,name\nA-1,mug\nB-2,lamp\n");
});
t.after((ctx) => ctx.ws.remove());

// No service is reached: plan sends nothing, and run --plan stops at reading the plan.
const cli = (ws: Workspace, args: readonly string[]) =>
  execa("node", [bin, ...args], { cwd: ws.dir, reject: false, timeout: 60_000, env: { OMNIBATCH_BASE_URL: "http://127.0.0.1:9", OMNIBATCH_API_KEY: "k" }, extendEnv: false });

const noStack = (stderr: string) => assert.not.match(stderr, /internal error|\n\s+at /);

t("plan --out onto a symbolic link, a FIFO or a folder is refused (exit 2) and leaves it as it was; a regular file is replaced", async ({ ws }) => {
  const target = join(ws.dir, "elsewhere.json");
  writeFileSync(target, "keep me\n");
  symlinkSync(target, join(ws.dir, "link.json"));
  const link = await cli(ws, ["plan", ws.manifest, "--out", "link.json"]);
  assert.is(link.exitCode, 2, link.stderr);
  assert.match(link.stderr, /refusing to write the plan to \S+link\.json: it is a symbolic link, not a regular file \(left as it is\)/);
  noStack(link.stderr);
  assert.ok(lstatSync(join(ws.dir, "link.json")).isSymbolicLink(), "still a link");
  assert.is(readlinkSync(join(ws.dir, "link.json")), target);
  assert.is(readFileSync(target, "utf8"), "keep me\n");

  execFileSync("mkfifo", [join(ws.dir, "fifo.json")]);
  const fifo = await cli(ws, ["plan", ws.manifest, "--out", "fifo.json"]);
  assert.is(fifo.exitCode, 2, fifo.stderr);
  assert.match(fifo.stderr, "it is a FIFO (named pipe), not a regular file");
  assert.ok(lstatSync(join(ws.dir, "fifo.json")).isFIFO(), "still a FIFO");

  const folder = await cli(ws, ["plan", ws.manifest, "--out", "."]);
  assert.is(folder.exitCode, 2, folder.stderr);
  noStack(folder.stderr);

  writeFileSync(join(ws.dir, "old.json"), "an older plan\n");
  const plain = await cli(ws, ["plan", ws.manifest, "--out", "old.json"]);
  assert.is(plain.exitCode, 0, plain.stderr);
  assert.is(JSON.parse(readFileSync(join(ws.dir, "old.json"), "utf8")).format, "omnibatch-plan");
});

t("plan --out into a folder that does not exist is exit 2 naming it, no stack trace", async ({ ws }) => {
  const r = await cli(ws, ["plan", ws.manifest, "--out", "missing/dir/p.json"]);
  assert.is(r.exitCode, 2, r.stderr);
  assert.match(r.stderr, /cannot write the plan to \S+missing\/dir\/p\.json: the folder \S+missing\/dir does not exist/);
  noStack(r.stderr);
  assert.not.ok(existsSync(join(ws.dir, "missing")));
});

t("run --plan with a FIFO is refused at once (no hang), /dev/zero is not read, a large file is refused by its size", async ({ ws }) => {
  execFileSync("mkfifo", [join(ws.dir, "plan.fifo")]);
  const t0 = Date.now();
  const fifo = await cli(ws, ["run", ws.manifest, "--plan", "plan.fifo"]);
  assert.is(fifo.timedOut, false, "run --plan FIFO blocked");
  assert.is(fifo.exitCode, 2, fifo.stderr);
  assert.match(fifo.stderr, /cannot read the plan \S+plan\.fifo: it is a FIFO \(named pipe\), not a regular file/);
  noStack(fifo.stderr);
  assert.ok(Date.now() - t0 < 30_000);

  const zero = await cli(ws, ["run", ws.manifest, "--plan", "/dev/zero"]);
  assert.is(zero.exitCode, 2, zero.stderr);
  assert.match(zero.stderr, "cannot read the plan /dev/zero: it is a device, not a regular file");
  noStack(zero.stderr);

  // Just over the bound, as a sparse file (no disk used): refused by its size, not read.
  const big = join(ws.dir, "big.json");
  writeFileSync(big, "");
  truncateSync(big, MAX_PLAN_BYTES + 1);
  const large = await cli(ws, ["run", ws.manifest, "--plan", "big.json"]);
  assert.is(large.exitCode, 2, large.stderr);
  assert.match(large.stderr, "big.json: it is larger than 256 MB");
});

t.run();
