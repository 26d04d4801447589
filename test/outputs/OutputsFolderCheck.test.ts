// The start check's scope on a real file system: folders a run may write into are looked
// at on the way and within, folders of finished tasks only on the way (their own entry
// included), and a folder with many wanted entries is listed once with the same findings
// as looking each entry up.

import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { findEscapingLinks } from "../../src/outputs/OutputsFolderCheck.js";

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

test.run();
