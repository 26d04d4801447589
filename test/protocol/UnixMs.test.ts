// Times the service sends are untrusted: only whole milliseconds from 1970 to the end of
// year 9999 are times; anything else is shown as no time, never a thrown "Invalid time value".

import { test } from "uvu";
import * as assert from "uvu/assert";
import { isoTime, isUnixMs, MAX_UNIX_MS } from "../../src/protocol/UnixMs.js";

test("isUnixMs takes whole milliseconds from 0 to the end of year 9999 and nothing else", () => {
  for (const ms of [0, 1_781_080_778_802, MAX_UNIX_MS]) assert.ok(isUnixMs(ms), String(ms));
  for (const ms of [-1, 1.5, MAX_UNIX_MS + 1, 8.64e15, 8.64e15 + 1, 1e300, -1e300, Number.NaN, Number.POSITIVE_INFINITY, undefined]) {
    assert.not.ok(isUnixMs(ms), String(ms));
  }
});

test("isoTime formats a time and gives undefined for one no report can show", () => {
  assert.is(isoTime(1_781_080_778_802), "2026-06-10T08:39:38.802Z");
  assert.is(isoTime(MAX_UNIX_MS), "9999-12-31T23:59:59.999Z");
  assert.is(isoTime(1e300), undefined);
  assert.is(isoTime(-1e300), undefined);
  assert.is(isoTime(undefined), undefined);
});

test.run();
