// Where a settled stamp is kept (src/state/settledCache.ts): the cache folder chosen from the
// environment, one file per lockfile, read back only when whole and well-formed, written by
// rename, and a folder that cannot be written costs nothing but the stamp. Real files.

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cacheDirOf, readSettledStamp, settledStampFile, writeSettledStamp } from "../../src/state/settledCache.js";
import { makeStamp, SETTLED_STAMP_FORMAT } from "../../src/state/SettledStamp.js";

const hex = (c: string) => c.repeat(64);
const stamp = makeStamp({
  format: SETTLED_STAMP_FORMAT,
  tool: "0.1.0+plan1",
  manifest: ["/w/m.yaml", hex("a")],
  inputs: [["/w/data.csv", hex("b")]],
  options: { outputs: "/w/out", service: "https://api.example" },
  lines: hex("c"),
  day: 20_000,
  reports: hex("d"),
  replay: { events: [{ type: "start" }], summary: { outcome: "done", exitCode: 0, created: 0, downloaded: 0 } },
});

test("the cache folder: OMNIBATCH_CACHE_DIR, else XDG_CACHE_HOME/omnibatch, else ~/.cache/omnibatch", () => {
  const home = () => "/home/u";
  assert.is(cacheDirOf({ OMNIBATCH_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x" }, home), "/c");
  assert.is(cacheDirOf({ XDG_CACHE_HOME: "/x" }, home), "/x/omnibatch");
  assert.is(cacheDirOf({}, home), "/home/u/.cache/omnibatch");
  assert.is(cacheDirOf({ OMNIBATCH_CACHE_DIR: "" }, home), "/home/u/.cache/omnibatch", "empty is unset");
});

test("one stamp file per lockfile path, inside the cache folder's settled/", () => {
  const a = settledStampFile("/w/a.lock.json", "/c");
  assert.ok(a.startsWith("/c/settled/") && a.endsWith(".json"), a);
  assert.is(settledStampFile("/w/a.lock.json", "/c"), a);
  assert.is.not(settledStampFile("/w/b.lock.json", "/c"), a);
  assert.is.not(settledStampFile("/v/a.lock.json", "/c"), a);
});

test("written and read back; a damaged, foreign or edited file is no stamp", () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-stampcache-"));
  try {
    const file = settledStampFile("/w/m.lock.json", dir);
    assert.is(readSettledStamp(file), undefined, "none yet");
    assert.ok(writeSettledStamp(file, stamp));
    assert.equal(readSettledStamp(file), stamp);
    assert.equal(readdirSync(join(dir, "settled")), [file.slice(file.lastIndexOf("/") + 1)], "no temp file left");
    writeFileSync(file, JSON.stringify(stamp).slice(0, 100));
    assert.is(readSettledStamp(file), undefined, "torn");
    writeFileSync(file, JSON.stringify({ ...stamp, day: stamp.day + 1 }));
    assert.is(readSettledStamp(file), undefined, "edited without its key");
    writeFileSync(file, JSON.stringify({ __proto__: { polluted: true }, ...stamp, format: 99 }));
    assert.is(readSettledStamp(file), undefined, "another format");
    writeFileSync(file, "null");
    assert.is(readSettledStamp(file), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a cache folder that cannot be made: not kept, nothing thrown", () => {
  const dir = mkdtempSync(join(tmpdir(), "omnibatch-stampcache-"));
  try {
    const blocked = join(dir, "file");
    writeFileSync(blocked, "x");
    assert.is(writeSettledStamp(settledStampFile("/w/m.lock.json", blocked), stamp), false);
    assert.is(readSettledStamp(settledStampFile("/w/m.lock.json", blocked)), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
