// Before anything is paid for, a run checks where it will write (issue 9, items 6 and 13):
// an outputs folder that cannot be written to, or that holds a link leading out of it,
// is a clear error and exit 2 with nothing sent. A disk that fills up after creates were
// sent is not "nothing was sent": exit 3, and the next run resumes without paying twice.
// The built CLI against a real emulator over loopback; real (tmpfs) mounts, as root.

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync, openSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { manifestYaml, runCli, workspace, type Workspace } from "./runFixture.js";

const t = suite("omnibatch run: start-up checks");

const creates = (stats: { requests: Record<string, number> }) => (stats.requests["video.create"] ?? 0) + (stats.requests["image.create"] ?? 0);

/** Mounts a tmpfs at `dir` (made if needed); undefined when mounting is not possible here (not root). */
const mountTmpfs = (dir: string, options: string): boolean => {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", dir], { stdio: "ignore" });
    return true;
  } catch {
    console.log("  (skipped: cannot mount a tmpfs here; needs root on Linux)");
    return false;
  }
};
const unmount = (dir: string) => {
  try {
    execFileSync("umount", [dir], { stdio: "ignore" });
  } catch {
    // left mounted
  }
};

const withEmulator = async (use: (emu: Awaited<ReturnType<typeof startEmulator>>) => Promise<void>, config = {}) => {
  const emu = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 20, image: 40 }, ...config }, { port: 0 });
  try {
    await use(emu);
  } finally {
    await emu.close();
  }
};

t("a read-only outputs folder: exit 2 naming it, before any create", async () => {
  const ws = workspace(manifestYaml(`ro${Date.now().toString(36)}`, { subjects: 1, moods: 1 }));
  if (!mountTmpfs(ws.outputs, "ro,size=64k")) return ws.remove();
  try {
    await withEmulator(async (emu) => {
      const r = await runCli(ws, ["--base-url", emu.url, "--quiet"], { OMNIBATCH_API_KEY: emu.apiKey });
      assert.is(r.exitCode, 2, r.all);
      assert.match(r.all, /outputs folder .* cannot be written to \(read-only file system\)/);
      assert.match(r.all, /nothing was sent/);
      assert.not.match(r.all, /\n\s+at /, "no stack trace");
      assert.is(creates(emu.stats()), 0);
    });
  } finally {
    unmount(ws.outputs);
    ws.remove();
  }
});

t("a link in the outputs folder leading out of it: exit 2 naming it, before any create, nothing written where it leads", async () => {
  const ws = workspace(manifestYaml(`ln${Date.now().toString(36)}`, { subjects: 1, moods: 1 }));
  const elsewhere = mkdtempSync(join(tmpdir(), "omnibatch-elsewhere-"));
  try {
    mkdirSync(ws.outputs, { recursive: true });
    symlinkSync(elsewhere, join(ws.outputs, "clips"));
    await withEmulator(async (emu) => {
      const r = await runCli(ws, ["--base-url", emu.url, "--quiet"], { OMNIBATCH_API_KEY: emu.apiKey });
      assert.is(r.exitCode, 2, r.all);
      assert.match(r.all, /symbolic link/);
      assert.match(r.all, /clips ->/);
      assert.is(creates(emu.stats()), 0);
      assert.equal(readdirSync(elsewhere), []);
    });
  } finally {
    rmSync(elsewhere, { recursive: true, force: true });
    ws.remove();
  }
});

/** Fills the file system at `dir` up (bounded): writes until ENOSPC. */
const fill = (dir: string): string => {
  const file = join(dir, "filler.bin");
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(16 * 1024, 7);
  try {
    for (let i = 0; i < 4096; i++) writeSync(fd, chunk);
  } catch {
    // full
  } finally {
    closeSync(fd);
  }
  return file;
};

t("the disk fills up after creates were sent: exit 3 (never 2, 'nothing was sent'); after freeing it the next run ends done, nothing created twice", async () => {
  const root = mkdtempSync(join(tmpdir(), "omnibatch-full-"));
  if (!mountTmpfs(root, "size=4m")) return rmSync(root, { recursive: true, force: true });
  const dir = join(root, "ws");
  mkdirSync(dir);
  const yaml = manifestYaml(`full${Date.now().toString(36)}`, { subjects: 2, moods: 4, concurrency: 2 });
  writeFileSync(join(dir, "m.yaml"), yaml);
  const ws: Workspace = { dir, manifest: join(dir, "m.yaml"), lockfile: join(dir, "m.lock.json"), outputs: join(dir, "out"), remove: () => undefined };
  try {
    await withEmulator(
      async (emu) => {
        const run = runCli(ws, ["--base-url", emu.url, "--quiet"], { OMNIBATCH_API_KEY: emu.apiKey });
        // Once the first creates are sent, the disk fills.
        const until = Date.now() + 30_000;
        while (creates(emu.stats()) === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
        assert.ok(creates(emu.stats()) > 0, "the run sent creates");
        const filler = fill(root);
        const r = await run;
        assert.is(r.exitCode, 3, r.all);
        assert.match(r.all, /Creates were already sent/);
        assert.not.match(r.all, /\n\s+at /, "no stack trace");
        rmSync(filler);
        const again = await runCli(ws, ["--base-url", emu.url, "--quiet"], { OMNIBATCH_API_KEY: emu.apiKey });
        assert.is(again.exitCode, 0, again.all);
        const twice = Object.entries(emu.stats().creates).filter(([, n]) => n > 1);
        assert.equal(twice, [], "no external id created twice");
      },
      { timing: { scale: 0.5 }, slots: { video: 2, image: 2 } },
    );
  } finally {
    unmount(root);
    rmSync(root, { recursive: true, force: true });
  }
});

t.run();
