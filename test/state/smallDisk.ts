// A small file system for the disk-full tests: a 256 KiB tmpfs under os.tmpdir(). Mounting
// needs root on Linux; where it cannot be had, `mountSmallDisk` says so and returns
// undefined, and the test reports itself skipped.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const mountSmallDisk = (): string | undefined => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-small-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir], { stdio: "ignore" });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    console.log("  (skipped: cannot mount a tmpfs here; needs root on Linux)");
    return undefined;
  }
};

export const unmountSmallDisk = (dir: string): void => {
  try {
    execFileSync("umount", [dir], { stdio: "ignore" });
  } catch {
    // left mounted: nothing more to do
  }
  rmSync(dir, { recursive: true, force: true });
};
