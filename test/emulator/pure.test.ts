// The emulator's pure pieces: exact decimals, prices, the cursor, config checking,
// the event order and the seeded generator.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatDecimal, microsOfNumber, mulMicros, parseDecimal } from "../../src/emulator/Decimal.js";
import { priceOf, videoBilling, imageBilling } from "../../src/emulator/Pricing.js";
import { decodeCursor, encodeCursor } from "../../src/emulator/Cursor.js";
import { configProblems, defaultEmulatorConfig, mergeConfig, unknownKeys } from "../../src/emulator/EmulatorConfig.js";
import { EventQueue } from "../../src/emulator/EventQueue.js";
import { Prng } from "../../src/emulator/Prng.js";
import { isLoopbackHost } from "../../src/protocol/Loopback.js";

test("decimals are exact: 0.1 + 0.2 is 0.3 and 0.07 x 0.8 is 0.056", () => {
  assert.is(formatDecimal(parseDecimal("0.1")! + parseDecimal("0.2")!), "0.3");
  assert.is(formatDecimal(mulMicros(parseDecimal("0.07")!, microsOfNumber(0.8))), "0.056");
  assert.is(formatDecimal(parseDecimal("3")!, 2), "3.00");
  assert.is(parseDecimal("1e3"), undefined);
  assert.is(parseDecimal("-1"), undefined);
  assert.is(parseDecimal("0.1234567"), undefined);
});

test("video price is per second by resolution, discounted; overrides win", () => {
  const b = defaultEmulatorConfig.billing;
  const c = priceOf({ kind: "video", resolution: "1080p", durationSec: 7 }, b);
  assert.equal(videoBilling(c), [{ charge_type: "cash", cash_type: "balance", amount: "0.56", currency: "USD", list_price: "0.70" }]);
  const o = priceOf({ kind: "video", resolution: "720p", durationSec: 5 }, { ...b, prices: { ...b.prices, overrides: { "video/720p/5": "2" } } });
  assert.is(formatDecimal(o.listMicros), "2");
  const u = priceOf({ kind: "image", resolution: "2k", count: 3 }, { ...b, mode: "unit" });
  assert.equal(imageBilling(u), { final_unit_deduction: "6", final_balance_deduction: { quota: "0", list_price: "0" } });
});

test("a cursor round-trips and a foreign or tampered one is refused", () => {
  const state = { start: 1, end: 2_000_000_000_000, after: 1234, statuses: ["failed"], kinds: ["video", "image"] };
  assert.equal(decodeCursor(encodeCursor(state)), state);
  assert.is(decodeCursor("abc"), undefined);
  assert.is(decodeCursor(Buffer.from('[1,"x",2,3,[],[]]').toString("base64url")), undefined);
  assert.is(decodeCursor("!!"), undefined);
});

test("config checking names every bad and unknown key", () => {
  assert.equal(configProblems(defaultEmulatorConfig), []);
  const bad = mergeConfig(defaultEmulatorConfig, { slots: { video: -1 }, faults: { http5xxRate: 2, duplicateExternalId: "maybe" } });
  const problems = configProblems(bad);
  assert.ok(problems.some((p) => p.startsWith("slots.video")));
  assert.ok(problems.some((p) => p.startsWith("faults.http5xxRate")));
  assert.ok(problems.some((p) => p.startsWith("faults.duplicateExternalId")));
  assert.equal(unknownKeys(defaultEmulatorConfig, { slot: 1, faults: { rate: 1 }, billing: { balance: "3" } }), ["slot", "faults.rate"]);
});

test("mergeConfig: objects merge deeply, arrays replace, null removes an optional setting", () => {
  const withBalance = mergeConfig(defaultEmulatorConfig, { billing: { balance: "5" }, faults: { endpoints: ["download"] } });
  assert.is(withBalance.billing.balance, "5");
  assert.is(withBalance.billing.currency, "USD");
  assert.equal(withBalance.faults.endpoints, ["download"]);
  assert.is(mergeConfig(withBalance, { billing: { balance: null } }).billing.balance, undefined);
});

test("events come out in time order, processing before end at equal times", () => {
  const q = new EventQueue();
  q.push({ at: 5, seq: 2, phase: "end" });
  q.push({ at: 5, seq: 2, phase: "processing" });
  q.push({ at: 1, seq: 9, phase: "end" });
  q.push({ at: 5, seq: 1, phase: "end" });
  const out = [];
  for (let e = q.pop(); e; e = q.pop()) out.push(`${e.at}/${e.seq}/${e.phase}`);
  assert.equal(out, ["1/9/end", "5/1/end", "5/2/processing", "5/2/end"]);
});

test("the generator replays from its seed and stays in range", () => {
  const a = new Prng(3);
  const b = new Prng(3);
  const xs = Array.from({ length: 100 }, () => a.int(2, 9));
  assert.equal(xs, Array.from({ length: 100 }, () => b.int(2, 9)));
  assert.ok(xs.every((x) => x >= 2 && x <= 9));
  assert.equal(new Set(xs).size, 8);
});

test("loopback hosts: 127.0.0.0/8, localhost and ::1 only", () => {
  for (const h of ["127.0.0.1", "127.4.5.6", "localhost", "[::1]", "::1"]) assert.ok(isLoopbackHost(h), h);
  for (const h of ["10.0.0.1", "192.168.1.1", "example.com", "128.0.0.1", "[::2]", "localhost.example.com"]) assert.not.ok(isLoopbackHost(h), h);
});

test.run();
