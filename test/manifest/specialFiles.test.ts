// Device files and FIFOs named as a data file, an image or the manifest itself: only
// regular files are read, so validate neither blocks on a FIFO nor reads /dev/zero until
// the process aborts. Each case is a clear manifest problem (exit 2), found within seconds.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { ManifestInvalid } from "../../src/manifest/Diagnostic.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { readRegularFileSync } from "../../src/manifest/readRegularFile.js";
import { tempManifest } from "./tempManifest.js";

const bin = fileURLToPath(new URL("../../dist/cli/bin.js", import.meta.url));
const head = "version: 1\nname: t\n";

/** The problems loadManifest reports, as text. */
const problems = async (file: string): Promise<string> => {
  try {
    await loadManifest(file);
  } catch (error) {
    if (error instanceof ManifestInvalid) return error.diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`).join("\n");
    throw error;
  }
  throw new Error("expected the manifest to be invalid");
};

test("readRegularFileSync: a FIFO and /dev/zero are refused at once; a regular file over the bound is refused", () => {
  const m = tempManifest(head);
  try {
    const fifo = join(m.dir, "pipe");
    execFileSync("mkfifo", [fifo]);
    const t0 = Date.now();
    const r = readRegularFileSync(fifo, 1024);
    assert.equal(r, { ok: false, reason: "is a FIFO (named pipe), not a regular file: only regular files are read" });
    assert.equal(readRegularFileSync("/dev/zero", 1024), { ok: false, reason: "is a device, not a regular file: only regular files are read" });
    assert.ok(Date.now() - t0 < 2_000);
    writeFileSync(join(m.dir, "big"), Buffer.alloc(2048));
    assert.equal(readRegularFileSync(join(m.dir, "big"), 1024), { ok: false, reason: "is larger than 1024 bytes" });
    const ok = readRegularFileSync(join(m.dir, "big"), 4096);
    assert.ok(ok.ok && ok.bytes.length === 2048);
  } finally {
    m.cleanup();
  }
});

test("a data file that is a FIFO or a device is a manifest problem at the rows line", async () => {
  const m = tempManifest(`${head}jobs:\n  a:\n    kind: image\n    prompt: "{{ r.p }}"\n    matrix: { r: { rows: data/rows.csv } }\n  b:\n    kind: image\n    prompt: "{{ z.p }}"\n    matrix: { z: { rows: data/zero.csv } }\n`);
  try {
    execFileSync("mkdir", ["-p", join(m.dir, "data")]);
    execFileSync("mkfifo", [join(m.dir, "data", "rows.csv")]);
    symlinkSync("/dev/zero", join(m.dir, "data", "zero.csv"));
    const t0 = Date.now();
    const text = await problems(m.file);
    assert.ok(Date.now() - t0 < 10_000);
    assert.match(text, "the data file 'data/rows.csv' is a FIFO (named pipe), not a regular file");
    assert.match(text, "the data file 'data/zero.csv' is a device, not a regular file");
  } finally {
    m.cleanup();
  }
});

test("an image that is a FIFO or /dev/zero is a manifest problem, not a hang or an abort", async () => {
  const m = tempManifest(`${head}jobs:\n  a:\n    kind: image\n    prompt: "like <<<ref>>>"\n    images: { ref: pipe.png }\n  b:\n    kind: image\n    prompt: "like <<<ref>>>"\n    images: { ref: /dev/zero }\n`);
  try {
    execFileSync("mkfifo", [join(m.dir, "pipe.png")]);
    const text = await problems(m.file);
    assert.match(text, "is a FIFO (named pipe), not a regular file");
    assert.match(text, "is a device, not a regular file");
  } finally {
    m.cleanup();
  }
});

test("validate (the built CLI) with a FIFO data file and a FIFO manifest exits 2 within seconds, no stack trace", async () => {
  const m = tempManifest(`${head}jobs:\n  a:\n    kind: image\n    prompt: "{{ r.p }}"\n    matrix: { r: { rows: rows.csv } }\n`);
  try {
    execFileSync("mkfifo", [join(m.dir, "rows.csv")]);
    execFileSync("mkfifo", [join(m.dir, "fifo.yaml")]);
    for (const file of [m.file, join(m.dir, "fifo.yaml")]) {
      const t0 = Date.now();
      const r = await execa("node", [bin, "validate", file], { reject: false, timeout: 30_000, env: { OMNIBATCH_API_KEY: "" } });
      assert.is(r.timedOut, false, `validate ${file} blocked`);
      assert.is(r.exitCode, 2, r.stderr);
      assert.match(r.stderr, "FIFO");
      assert.not.match(r.stderr, /\n\s+at /);
      assert.ok(Date.now() - t0 < 30_000);
    }
  } finally {
    m.cleanup();
  }
});

test.run();
