// Test helper: writes a manifest and its files into a fresh temp folder.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const assetsDir = fileURLToPath(new URL("../../manifests/assets", import.meta.url));

export interface TempManifest {
  readonly dir: string;
  readonly file: string;
  readonly cleanup: () => void;
}

/** `files` maps relative paths to contents; the manifest is `m.yaml`. Assets copied to `assets/`. */
export const tempManifest = (yaml: string, files: Record<string, string | Uint8Array> = {}, name = "m.yaml"): TempManifest => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-manifest-"));
  cpSync(assetsDir, join(dir, "assets"), { recursive: true });
  for (const [rel, content] of Object.entries({ ...files, [name]: yaml })) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  return { dir, file: join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
};
