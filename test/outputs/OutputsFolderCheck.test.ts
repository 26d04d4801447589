// The start check's scope on a real file system: folders a run may write into are looked
// at on the way and within, folders of finished tasks only on the way (their own entry
// included), and a folder with many wanted entries is listed once with the same findings
// as looking each entry up. The per-write guard (folderGuard) gives realDirInside's answers
// while resolving the outputs folder once, and sees a link made after its first use.

import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { findEscapingLinks, folderGuard, realDirInside, scopeTree, type LinkScope, type ScopeNode } from "../../src/outputs/OutputsFolderCheck.js";
import { UnsafeOutputPath } from "../../src/outputs/OutputPaths.js";
import { rng } from "../state/randomTask.js";

const test = suite<{ root: string }>("OutputsFolderCheck", { root: "" });

test.before.each(async (ctx) => {
  ctx.root = await mkdtemp(join(tmpdir(), "omnibatch-linkscope-"));
});
test.after.each(async (ctx) => {
  await rm(ctx.root, { recursive: true, force: true });
});

/** out/job/t0..t{n-1} as real folders, and a folder outside the outputs folder. */
const layout = async (root: string, n: number) => {
  const outputs = join(root, "out");
  const elsewhere = join(root, "elsewhere");
  await mkdir(elsewhere);
  for (let i = 0; i < n; i++) await mkdir(join(outputs, "job", `t${i}`), { recursive: true });
  return { outputs, elsewhere, dirs: Array.from({ length: n }, (_, i) => `job/t${i}`) };
};

for (const n of [3, 40]) {
  const how = n > 16 ? "listing the job folder once" : "looking each folder up";
  test(`${n} task folders (${how}): a link within a folder to write into is found, within a finished one it is not, and a finished folder that is itself a link is`, async ({ root }) => {
    const { outputs, elsewhere, dirs } = await layout(root, n);
    await symlink(elsewhere, join(outputs, "job", "t0", "sub"));
    await symlink(elsewhere, join(outputs, "job", "t1", "sub"));
    await rm(join(outputs, "job", "t2"), { recursive: true });
    await symlink(elsewhere, join(outputs, "job", "t2"));
    const [first, second, third, ...rest] = dirs;
    // t0 may be written into, t1 and t2 are finished.
    const found = await findEscapingLinks(outputs, { inside: [first!, ...rest], onTheWay: [second!, third!] });
    assert.equal(found.map((l) => l.path).sort(), ["job/t0/sub", "job/t2"]);
    assert.ok(found.every((l) => l.target === elsewhere));
    // Everything looked at within: the link in t1 is found too.
    assert.equal((await findEscapingLinks(outputs, dirs)).map((l) => l.path).sort(), ["job/t0/sub", "job/t1/sub", "job/t2"]);
    // The whole tree, as before any scope.
    assert.equal((await findEscapingLinks(outputs)).map((l) => l.path).sort(), ["job/t0/sub", "job/t1/sub", "job/t2"]);
  });
}

test("a link on the way to finished folders is found once; folders that do not exist yet are fine", async ({ root }) => {
  const { outputs, elsewhere } = await layout(root, 0);
  await mkdir(outputs);
  await symlink(elsewhere, join(outputs, "job"));
  const onTheWay = Array.from({ length: 30 }, (_, i) => `job/t${i}`);
  assert.equal((await findEscapingLinks(outputs, { inside: ["new/a", "new/b"], onTheWay })).map((l) => l.path), ["job"]);
  assert.equal(await findEscapingLinks(outputs, { inside: ["new/a"], onTheWay: ["other/t1"] }), []);
});

test("at most `limit` links are returned", async ({ root }) => {
  const { outputs, elsewhere, dirs } = await layout(root, 30);
  for (const d of dirs) await symlink(elsewhere, join(outputs, ...d.split("/"), "sub"));
  assert.is((await findEscapingLinks(outputs, dirs, 5)).length, 5);
});

/** What a check answers: "ok", or "refused" (UnsafeOutputPath); anything else is thrown on. */
const verdict = async (check: () => unknown): Promise<string> => {
  try {
    await check();
    return "ok";
  } catch (error) {
    if (error instanceof UnsafeOutputPath) return "refused";
    throw error;
  }
};

test("folderGuard answers as realDirInside for real folders, missing ones, links inside and links out, and sees a link made after its first use", async ({ root }) => {
  const { outputs, elsewhere } = await layout(root, 2);
  await mkdir(join(outputs, "other", "t9"), { recursive: true });
  await symlink(join(outputs, "other"), join(outputs, "inner")); // a link that stays inside
  await symlink(elsewhere, join(outputs, "job", "t1", "sub")); // a link out
  const guard = folderGuard(outputs);
  const cases: [string, string][] = [
    ["job/t0", "ok"],
    ["job/t0/new/deeper", "ok"],
    ["new/folder", "ok"],
    ["inner/t9", "ok"],
    ["inner/t9/new", "ok"],
    ["job/t1/sub", "refused"],
    ["job/t1/sub/new", "refused"],
  ];
  for (const [rel, expected] of cases) {
    const dir = join(outputs, ...rel.split("/"));
    assert.is(await verdict(() => realDirInside(outputs, dir)), expected, `realDirInside ${rel}`);
    assert.is(await verdict(() => guard.realDirInside(dir)), expected, `folderGuard ${rel}`);
  }
  // A task folder replaced by a link out after the guard checked it once: refused at the next call.
  const t0 = join(outputs, "job", "t0");
  assert.is(await verdict(() => guard.realDirInside(t0)), "ok");
  await rm(t0, { recursive: true });
  await symlink(elsewhere, t0);
  assert.is(await verdict(() => guard.realDirInside(t0)), "refused");
  assert.is(await verdict(() => guard.realDirInside(join(t0, "deeper"))), "refused");
});

test("folderGuard made before the outputs folder exists: a link out made in its place later is refused", async ({ root }) => {
  const outputs = join(root, "out");
  const elsewhere = join(root, "elsewhere");
  await mkdir(elsewhere);
  const guard = folderGuard(outputs);
  assert.is(await verdict(() => guard.realDirInside(join(outputs, "job", "t0"))), "ok");
  await mkdir(outputs);
  await symlink(elsewhere, join(outputs, "job"));
  assert.is(await verdict(() => guard.realDirInside(join(outputs, "job", "t0"))), "refused");
});

/** The scope tree made the straightforward way (each path split and walked from the root, a node per folder). */
const referenceTree = (scope: LinkScope): ScopeNode => {
  const root: ScopeNode = { children: undefined, inside: false };
  const add = (rel: string, inside: boolean) => {
    let node = root;
    for (const part of rel.split("/")) {
      if (part === "" || part === ".") continue;
      const children = (node.children ??= new Map());
      let next = children.get(part);
      if (next === undefined) children.set(part, (next = { children: undefined, inside: false }));
      node = next;
    }
    if (inside) node.inside = true;
  };
  for (const rel of scope.inside) add(rel, true);
  for (const rel of scope.onTheWay ?? []) add(rel, false);
  return root;
};

type Shape = { inside: boolean; children?: [string, Shape][] };
const shapeOf = (node: ScopeNode): Shape => ({
  inside: node.inside,
  ...(node.children ? { children: [...node.children].map(([k, v]): [string, Shape] => [k, shapeOf(v)]).sort(([a], [b]) => (a < b ? -1 : 1)) } : {}),
});

test("the scope tree (its shared leaves, its kept parent) equals the one made by walking every path from the root", () => {
  // Few part names, so paths share parents, repeat, and pass through each other's leaves (seeded: the same scopes every run).
  const PARTS = ["a", "b", "c", "", ".", "job", "t0", "t1"];
  for (let seed = 1; seed <= 2000; seed++) {
    const r = rng(seed);
    const rel = () => Array.from({ length: Math.floor(r() * 5) }, () => PARTS[Math.floor(r() * PARTS.length)]!).join("/");
    const paths = () => Array.from({ length: Math.floor(r() * 13) }, rel);
    const s: LinkScope = { inside: paths(), onTheWay: paths() };
    assert.equal(shapeOf(scopeTree(s)), shapeOf(referenceTree(s)), `seed ${seed}: ${JSON.stringify(s)}`);
  }
  // A run's shape: one job folder, finished tasks on the way, a few inside, one below a finished one.
  const big: LinkScope = { inside: ["job/t5", "job/t7/sub"], onTheWay: Array.from({ length: 1000 }, (_, i) => `job/t${i}`) };
  assert.equal(shapeOf(scopeTree(big)), shapeOf(referenceTree(big)));
});

test.run();
