// The region rule through the built CLI, with two emulators on different ports standing
// for two regional hosts (ids of one invisible from the other): the lockfile records the
// service it ran against (never the key); a run against the other one with unfinished
// tasks is refused (exit 2) before anything is sent and changes nothing; with
// --switch-service it creates them there once and finishes; --emulate records `emulator`,
// so emulated reruns (a new port each time) never count as a move.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startEmulator, type RunningEmulator } from "../../src/emulator/Emulator.js";
import { assertAllResults, manifestYaml, runCli, workspace } from "./runFixture.js";

let east: RunningEmulator;
let west: RunningEmulator;
const t = suite("run against another service (region)");

t.before(async () => {
  east = await startEmulator({ timing: { scale: 1 }, slots: { video: 20, image: 40 } }, { port: 0 });
  west = await startEmulator({ timing: { scale: 0.15 }, slots: { video: 20, image: 40 } }, { port: 0 });
});
t.after(async () => {
  await east.close();
  await west.close();
});

const header = (path: string) => JSON.parse(readFileSync(path, "utf8").split("\n")[0]!) as { service?: string };
const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);

t("refused against another service while tasks are unfinished at the first; --switch-service creates them there once", async () => {
  const ws = workspace(manifestYaml("region", { subjects: 2, moods: 2 }));
  try {
    assert.is.not(east.url, west.url);
    const first = await runCli(ws, ["--base-url", east.url, "--max-wait", "1s", "--no-callbacks"], { OMNIBATCH_API_KEY: east.apiKey });
    assert.is(first.exitCode, 3, first.all);
    assert.is(header(ws.lockfile).service, east.url.replace(/\/+$/, ""));
    assert.not.ok(readFileSync(ws.lockfile, "utf8").includes(east.apiKey), "the key is never recorded");
    const createdEast = sum(east.stats().creates);
    assert.ok(createdEast > 0, "the first run created tasks at the first service");
    const bytes = readFileSync(ws.lockfile, "utf8");

    const refused = await runCli(ws, ["--base-url", west.url, "--no-callbacks"], { OMNIBATCH_API_KEY: west.apiKey });
    assert.is(refused.exitCode, 2, refused.all);
    assert.ok(refused.all!.includes(east.url.replace(/\/+$/, "")) && refused.all!.includes(west.url.replace(/\/+$/, "")), refused.all);
    assert.match(refused.all!, /--switch-service/);
    assert.match(refused.all!, /Nothing was sent/);
    assert.is(sum(west.stats().creates), 0, "nothing was created at the other service");
    assert.is(readFileSync(ws.lockfile, "utf8"), bytes, "the lockfile is unchanged");

    const switched = await runCli(ws, ["--base-url", west.url, "--switch-service", "--no-callbacks"], { OMNIBATCH_API_KEY: west.apiKey });
    assert.is(switched.exitCode, 0, switched.all);
    assert.match(switched.all!, /abandoned there and created again here/);
    const lock = await assertAllResults(ws);
    assert.is(header(ws.lockfile).service, west.url.replace(/\/+$/, ""));
    for (const id of Object.keys(lock.tasks)) assert.is(west.stats().creates[id], 1, id);
    assert.is(sum(east.stats().creates), createdEast, "nothing more at the first service");

    // Everything is downloaded: going back has nothing to abandon; it runs, says so, records it.
    const back = await runCli(ws, ["--base-url", east.url, "--no-callbacks"], { OMNIBATCH_API_KEY: east.apiKey });
    assert.is(back.exitCode, 0, back.all);
    assert.match(back.all!, /none of its tasks is unfinished there/);
    assert.is(header(ws.lockfile).service, east.url.replace(/\/+$/, ""));
    assert.is(sum(east.stats().creates), createdEast, "nothing created by going back");
  } finally {
    ws.remove();
  }
});

t("--emulate records `emulator`, not its port: a second emulated run (another port) is no move", async () => {
  const ws = workspace(manifestYaml("regionemu", { subjects: 1, moods: 1 }));
  const emulated = join(ws.dir, "m.emulate.lock.json");
  try {
    const first = await runCli(ws, ["--emulate", "--max-wait", "300ms"]);
    assert.ok(first.exitCode === 0 || first.exitCode === 3, first.all);
    assert.is(header(emulated).service, "emulator");
    const second = await runCli(ws, ["--emulate"]);
    assert.is(second.exitCode, 0, second.all);
    assert.is(header(emulated).service, "emulator");
  } finally {
    ws.remove();
  }
});

t.run();
