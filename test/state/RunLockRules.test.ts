// The run lock's pure rules (src/state/RunLockRules.ts): when a lock or a takeover guard
// is stale, how long a taker may act on its judgement, whether what it moved aside is
// the lock it judged, whether a late holder must count a guard as a takeover under way,
// which leftover temp and aside folders (and which takeover guard) may be removed, and when
// an owner file's pid can be asked about. Examples, then properties over seeded random inputs.

import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  COARSE_MTIME_MS,
  guardOfDeadTaker,
  isStale,
  judgementStillValid,
  leftoverOf,
  leftoverUnused,
  livenessOfProbe,
  movedIsJudged,
  probeablePid,
  samePidSpace,
  staleMarginMs,
  takeoverMayBeUnderWay,
  type Leftover,
} from "../../src/state/RunLockRules.js";
import { rng } from "./randomTask.js";

const NOW = 1_790_000_000_000;
const seen = (ageMs: number, ownerAliveHere: boolean | undefined, staleMs = 30_000) => ({ now: NOW, heartbeat: NOW - ageMs, ownerAliveHere, staleMs });

test("the margin: 2 s for the default 30 s limit, a quarter of a short limit", () => {
  assert.is(staleMarginMs(30_000), 2_000);
  assert.is(staleMarginMs(1_000), 250);
  assert.is(staleMarginMs(0), 0);
});

test("stale: an owner dead on this host at once; otherwise only past the limit and its margin", () => {
  assert.ok(isStale(seen(0, false)), "dead here, heartbeat just now");
  assert.not.ok(isStale(seen(30_001, true)), "alive here, 1 ms past the limit: the margin (a whole-second mtime)");
  assert.not.ok(isStale(seen(31_999, undefined)), "another host, inside the margin");
  assert.not.ok(isStale(seen(32_000, undefined)), "another host, at the margin's end");
  assert.ok(isStale(seen(32_001, undefined)), "another host, past it");
  assert.ok(isStale(seen(40_000, true)), "alive here (a reused pid, or frozen), heartbeat long gone");
  assert.not.ok(isStale(seen(-60_000, undefined)), "a heartbeat in the future (that host's clock ahead) is fresh");
});

test("a taker may act on its judgement only within half the stale limit (its own monotonic clock)", () => {
  assert.ok(judgementStillValid(0, 30_000));
  assert.ok(judgementStillValid(15_000, 30_000));
  assert.not.ok(judgementStillValid(15_001, 30_000));
  assert.not.ok(judgementStillValid(-1, 30_000), "a clock that went back proves nothing");
});

test("what was moved aside is ours to remove only when it is the lock judged stale", () => {
  assert.ok(movedIsJudged("a1", "a1"));
  assert.not.ok(movedIsJudged("a1", "b2"), "another run's lock, placed since");
  assert.not.ok(movedIsJudged("a1", undefined));
  assert.not.ok(movedIsJudged(undefined, "b2"));
  assert.ok(movedIsJudged(undefined, undefined), "the same ownerless folder of an older version");
});

test("properties: over 20,000 random observations", () => {
  const r = rng(20261124);
  for (let i = 0; i < 20_000; i++) {
    const staleMs = Math.floor(r() * 120_000);
    const age = Math.floor((r() - 0.2) * 3 * (staleMs + 3_000));
    const alive = ([true, false, undefined] as const)[Math.floor(r() * 3)];
    const s = seen(age, alive, staleMs);
    const margin = staleMarginMs(staleMs);
    const label = JSON.stringify({ staleMs, age, alive });
    assert.ok(margin >= 0 && margin <= COARSE_MTIME_MS && margin <= staleMs, `margin bounds ${label}`);
    // A dead owner here is stale whatever its heartbeat; otherwise never within limit + margin.
    if (alive === false) assert.ok(isStale(s), `dead here ${label}`);
    else assert.is(isStale(s), age > staleMs + margin, label);
    // Monotone in time: stale now, stale later.
    if (isStale(s)) assert.ok(isStale({ ...s, now: s.now + Math.floor(r() * 60_000) }), `monotone ${label}`);
    // A fresher heartbeat never makes a lock stale that was not.
    if (!isStale(s)) assert.not.ok(isStale({ ...s, heartbeat: s.heartbeat + Math.floor(r() * 60_000) }), `fresher ${label}`);
    // A guard the taker made within the time it may act on is never stale to another taker:
    // its age then is at most half the limit, well inside limit + margin.
    const elapsed = Math.floor(r() * staleMs);
    if (judgementStillValid(elapsed, staleMs)) assert.not.ok(isStale(seen(elapsed, true, staleMs)), `own guard ${label}`);
    // Moved aside: taken only when it is the very lock judged.
    const tokens = ["a", "b", undefined] as const;
    const judged = tokens[Math.floor(r() * 3)];
    const moved = tokens[Math.floor(r() * 3)];
    assert.is(movedIsJudged(judged, moved), judged === moved);
  }
});

test("a late holder counts a guard as a takeover under way unless there is none, it predates the holder's lock, or its taker is dead on this host", () => {
  const started = NOW - 60_000;
  assert.not.ok(takeoverMayBeUnderWay(undefined, started), "no guard");
  assert.not.ok(takeoverMayBeUnderWay({ mtime: started - 1, ownerAliveHere: true }, started), "made before our lock: left by a killed taker of an older lock");
  assert.not.ok(takeoverMayBeUnderWay({ mtime: NOW, ownerAliveHere: false }, started), "made since, its taker's pid gone on this host");
  assert.ok(takeoverMayBeUnderWay({ mtime: NOW, ownerAliveHere: true }, started), "a live taker here");
  assert.ok(takeoverMayBeUnderWay({ mtime: NOW, ownerAliveHere: undefined }, started), "another host's taker, or no owner file: may be alive");
  assert.ok(takeoverMayBeUnderWay({ mtime: started, ownerAliveHere: undefined }, started), "made in the same millisecond as our lock");
});

const TOKEN = "0123456789abcdef";
test("leftovers: only the exact names the run lock makes beside its own folder", () => {
  const lock = "m.lock.json.running";
  assert.equal(leftoverOf(lock, `${lock}.${TOKEN}.tmp`), { kind: "tmp", of: "lock", token: TOKEN });
  assert.equal(leftoverOf(lock, `${lock}.${TOKEN}.aside`), { kind: "aside", of: "lock", token: TOKEN });
  assert.equal(leftoverOf(lock, `${lock}.takeover.${TOKEN}.tmp`), { kind: "tmp", of: "guard", token: TOKEN });
  assert.equal(leftoverOf(lock, `${lock}.takeover.${TOKEN}.aside`), { kind: "aside", of: "guard", token: TOKEN });
  for (const other of [
    lock,
    `${lock}.takeover`,
    `${lock}.takeover.claim`,
    `${lock}.${TOKEN}.tmp.x`,
    `${lock}.${TOKEN.toUpperCase()}.tmp`,
    `${lock}.${TOKEN.slice(1)}.tmp`,
    `${lock}.${TOKEN}0.aside`,
    `${lock}.other.${TOKEN}.tmp`,
    `${lock}.${TOKEN}.aside.${TOKEN}.aside`,
    `x${lock}.${TOKEN}.tmp`,
    `n.lock.json.running.${TOKEN}.tmp`,
    `m.lock.json.${TOKEN}.tmp`,
    "m.lock.json",
    "m.lock.json.journal",
  ]) {
    assert.is(leftoverOf(lock, other), undefined, other);
  }
  // Another lockfile whose name starts like this one's: its leftovers are not this lock's.
  assert.is(leftoverOf("m.lock.json.running", `m.lock.json.running.x.lock.json.running.${TOKEN}.tmp`), undefined);
});

const left = (kind: Leftover["kind"], ageMs: number, ownerAliveHere: boolean | undefined, ownerToken: string | undefined, staleMs = 30_000) => ({
  ...seen(ageMs, ownerAliveHere, staleMs),
  leftover: { kind, of: "lock" as const, token: TOKEN },
  ownerToken,
});

test("a leftover is out of use when whoever it names is dead here, or it is older than the stale limit and margin", () => {
  assert.ok(leftoverUnused(left("tmp", 0, false, TOKEN)), "a temp folder whose maker died here");
  assert.not.ok(leftoverUnused(left("tmp", 0, true, TOKEN)), "a temp folder whose maker lives: about to rename it into place");
  assert.not.ok(leftoverUnused(left("tmp", 0, undefined, undefined)), "an ownerless temp folder just made (its owner file not yet written)");
  assert.ok(leftoverUnused(left("tmp", 32_001, undefined, undefined)), "an ownerless temp folder past the limit and margin");
  assert.not.ok(leftoverUnused(left("tmp", 0, false, "fedcba9876543210")), "an owner file that is not its maker's tells nothing");
  assert.ok(leftoverUnused(left("aside", 0, false, "fedcba9876543210")), "a lock moved aside whose holder died here");
  assert.not.ok(leftoverUnused(left("aside", 5_000, true, "fedcba9876543210")), "a live holder's lock moved aside: may be put back");
  assert.not.ok(leftoverUnused(left("aside", 31_000, undefined, "fedcba9876543210")), "another host's lock, within the margin");
  assert.ok(leftoverUnused(left("aside", 32_001, undefined, "fedcba9876543210")), "another host's lock, stale");
});

test("properties: leftovers and guards over 20,000 random observations", () => {
  const r = rng(20261125);
  const lock = "m.lock.json.running";
  const hex = () => Array.from({ length: 16 }, () => "0123456789abcdef"[Math.floor(r() * 16)]).join("");
  for (let i = 0; i < 20_000; i++) {
    const staleMs = Math.floor(r() * 120_000);
    const age = Math.floor((r() - 0.2) * 3 * (staleMs + 3_000));
    const alive = ([true, false, undefined] as const)[Math.floor(r() * 3)];
    const kind = (["tmp", "aside"] as const)[Math.floor(r() * 2)]!;
    const token = hex();
    const ownerToken = [token, hex(), undefined][Math.floor(r() * 3)];
    const label = JSON.stringify({ staleMs, age, alive, kind, ownerToken: ownerToken === token ? "own" : ownerToken });
    const s = left(kind, age, alive, ownerToken, staleMs);
    const unused = leftoverUnused({ ...s, leftover: { ...s.leftover, token } });
    // Never judged out of use more readily than a lock would be taken over: a live or unknown
    // owner counts only by age, and past the limit and margin anything is.
    if (age > staleMs + staleMarginMs(staleMs)) assert.ok(unused, `old ${label}`);
    if (alive !== false) assert.is(unused, isStale(seen(age, undefined, staleMs)), `by age ${label}`);
    if (alive === false) assert.is(unused, kind === "aside" || ownerToken === token || isStale(seen(age, undefined, staleMs)), `dead ${label}`);
    // Names: made as the run lock makes them, recognised with their token; one character changed, not.
    const of = r() < 0.5 ? "lock" : "guard";
    const name = `${lock}.${of === "guard" ? "takeover." : ""}${token}.${kind}`;
    assert.equal(leftoverOf(lock, name), { kind, of, token }, name);
    const at = Math.floor(r() * name.length);
    const changed = name.slice(0, at) + "!" + name.slice(at + 1);
    assert.is(leftoverOf(lock, changed), undefined, changed);
    // A guard: never "under way" when absent or older than our lock; else exactly when its taker may live.
    const started = NOW - Math.floor(r() * 100_000);
    const mtime = started + Math.floor((r() - 0.5) * 100_000);
    const mayBe = takeoverMayBeUnderWay({ mtime, ownerAliveHere: alive }, started);
    assert.is(mayBe, mtime >= started && alive !== false, `guard ${label} ${mtime - started}`);
  }
});

test("a pid is asked about only when kill() takes it: a positive int32", () => {
  for (const pid of [1, 4242, 2 ** 22 + 12347, 2 ** 31 - 1]) assert.ok(probeablePid(pid), String(pid));
  for (const pid of [0, -1, -12345, 1.5, 2 ** 31, 2 ** 53 + 2, 2 ** 60, Number.NaN, Infinity, "4242", null, undefined, {}]) {
    assert.not.ok(probeablePid(pid), String(pid));
  }
});

test("only ESRCH means dead; no error and EPERM alive; anything else unknown", () => {
  assert.is(livenessOfProbe(undefined), true);
  assert.is(livenessOfProbe("EPERM"), true);
  assert.is(livenessOfProbe("ESRCH"), false);
  for (const code of ["ERR_INVALID_ARG_TYPE", "EINVAL", "ENOSYS", ""]) assert.is(livenessOfProbe(code), undefined, code);
});

test("a pid is judged only in the same pid space: the host key equal; a keyless owner file by its hostname", () => {
  const here = { host: "h", hostKey: "h/boot-1/4026531836" };
  assert.ok(samePidSpace({ host: "h", hostKey: "h/boot-1/4026531836" }, here));
  assert.not.ok(samePidSpace({ host: "h", hostKey: "h/boot-1/4026532179" }, here), "another pid namespace, same hostname (a container)");
  assert.not.ok(samePidSpace({ host: "h", hostKey: "h/boot-2/4026531836" }, here), "another boot (another machine of the same name)");
  assert.not.ok(samePidSpace({ host: "h", hostKey: 42 }, here), "a key that is not a string");
  assert.ok(samePidSpace({ host: "h" }, here), "an older build's owner file: by hostname, as it was judged then");
  assert.not.ok(samePidSpace({ host: "g" }, here));
});

test("a guard is removed by a run not taking over only when its taker is provably dead here", () => {
  assert.ok(guardOfDeadTaker({ mtime: NOW, ownerAliveHere: false }));
  assert.not.ok(guardOfDeadTaker({ mtime: NOW, ownerAliveHere: true }), "a live taker's");
  assert.not.ok(guardOfDeadTaker({ mtime: NOW - 3_600_000, ownerAliveHere: undefined }), "an old guard of another host or unreadable: the next taker replaces it");
});

test("properties: liveness and pid spaces over 20,000 random inputs", () => {
  const r = rng(20261126);
  const keys = ["a/1/1", "a/1/2", "a/2/1", "b/1/1", undefined, 7] as const;
  for (let i = 0; i < 20_000; i++) {
    const pid = [Math.floor(r() * 2 ** 32) - 2 ** 31, r() * 1000, 2 ** 31 + Math.floor(r() * 2 ** 40), Math.floor(r() * 40_000)][Math.floor(r() * 4)]!;
    const ok = probeablePid(pid);
    assert.is(ok, Number.isInteger(pid) && pid >= 1 && pid < 2 ** 31, String(pid));
    // Dead only on ESRCH.
    const code = ["ESRCH", "EPERM", undefined, "ERR_INVALID_ARG_TYPE", "EINVAL"][Math.floor(r() * 5)];
    assert.is(livenessOfProbe(code) === false, code === "ESRCH", String(code));
    // Same pid space: with a key, exactly equal keys (so never two namespaces of one hostname); without, the hostname.
    const ownerKey = keys[Math.floor(r() * keys.length)];
    const ownerHost = r() < 0.5 ? "a" : "b";
    const hereKey = keys[Math.floor(r() * 4)] as string;
    const here = { host: hereKey.split("/")[0]!, hostKey: hereKey };
    const same = samePidSpace({ host: ownerHost, hostKey: ownerKey }, here);
    if (ownerKey !== undefined) assert.is(same, ownerKey === hereKey, `${String(ownerKey)} ${hereKey}`);
    else assert.is(same, ownerHost === here.host);
    // A guard is removed only when its taker is dead: never when alive or unknown.
    const alive = ([true, false, undefined] as const)[Math.floor(r() * 3)];
    assert.is(guardOfDeadTaker({ mtime: NOW - Math.floor(r() * 1e7), ownerAliveHere: alive }), alive === false);
  }
});

test.run();
