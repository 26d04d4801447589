// A2 / A3 / B3 query parameter rules on both sides of each bound.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { checkCursorQuery, checkImageList, checkTaskQuery, type Violation } from "../../src/rules/index.js";

const rules = (vs: Violation[]) => vs.map((v) => v.rule);
const DAY = 24 * 60 * 60 * 1000;

test("A2: task_ids or external_task_ids alone pass; both together fail; empty counts as absent", () => {
  assert.equal(checkTaskQuery({ task_ids: "a,b" }), []);
  assert.equal(checkTaskQuery({ external_task_ids: "x" }), []);
  assert.equal(checkTaskQuery({}), []);
  assert.equal(checkTaskQuery({ task_ids: "a", external_task_ids: "" }), []);
  assert.equal(checkTaskQuery({ task_ids: "", external_task_ids: "x" }), []);
  const vs = checkTaskQuery({ task_ids: "a", external_task_ids: "x" });
  assert.equal(rules(vs), ["query.ids.both"]);
  assert.is(vs[0]!.code, 1201);
});

test("A3: the spec's example with an empty cursor and string timestamps passes", () => {
  assert.equal(checkCursorQuery({ start_time: "1781000000000", end_time: "1781080000000", cursor: "", limit: 100 }), []);
  assert.equal(checkCursorQuery({}), []);
  assert.equal(checkCursorQuery(undefined), []);
});

test("A3: timestamps as strings or numbers of Unix ms; anything else fails", () => {
  assert.equal(checkCursorQuery({ start_time: 1, end_time: 2 }), []);
  assert.equal(rules(checkCursorQuery({ start_time: "yesterday" })), ["cursor.start_time.type"]);
  assert.equal(rules(checkCursorQuery({ end_time: -5 })), ["cursor.end_time.type"]);
  assert.equal(rules(checkCursorQuery({ end_time: 1.5 })), ["cursor.end_time.type"]);
});

test("A3: start_time must be earlier than end_time", () => {
  assert.equal(rules(checkCursorQuery({ start_time: "2000", end_time: "2000" })), ["cursor.window.order"]);
  assert.equal(rules(checkCursorQuery({ start_time: 3000, end_time: "2000" })), ["cursor.window.order"]);
  assert.equal(checkCursorQuery({ start_time: 1999, end_time: "2000" }), []);
});

test("A3: with a clock, a one-sided window is judged against its defaults", () => {
  const now = 100 * DAY;
  assert.equal(checkCursorQuery({ start_time: now - 1 }, now), []);
  assert.equal(rules(checkCursorQuery({ start_time: now }, now)), ["cursor.window.order"]);
  assert.equal(checkCursorQuery({ end_time: now - 1 }, now), [], "start defaults to end minus 30 days");
  assert.equal(checkCursorQuery({ start_time: now + 5 }), [], "without a clock only both ends are compared");
});

test("A3: a non-empty cursor makes the window ignored", () => {
  assert.equal(checkCursorQuery({ cursor: "abc", start_time: "5000", end_time: "1000" }), []);
  assert.equal(rules(checkCursorQuery({ cursor: 7 })), ["cursor.cursor.type"]);
});

test("A3: limit 1 and 500 pass; 0, 501 and non-integers fail", () => {
  assert.equal(checkCursorQuery({ limit: 1 }), []);
  assert.equal(checkCursorQuery({ limit: 500 }), []);
  assert.equal(rules(checkCursorQuery({ limit: 0 })), ["cursor.limit.range"]);
  assert.equal(rules(checkCursorQuery({ limit: 501 })), ["cursor.limit.range"]);
  assert.equal(rules(checkCursorQuery({ limit: "10" })), ["cursor.limit.type"]);
});

test("A3: filters take known keys with their own values", () => {
  assert.equal(
    checkCursorQuery({
      filters: [
        { key: "status", values: ["submitted", "processing", "succeeded", "failed"] },
        { key: "product_type", values: ["video", "image", "try_on"] },
      ],
    }),
    [],
  );
  assert.equal(rules(checkCursorQuery({ filters: {} })), ["cursor.filters.type"]);
  assert.equal(rules(checkCursorQuery({ filters: [{ key: "kind", values: [] }] })), ["cursor.filter.key"]);
  const vs = checkCursorQuery({ filters: [{ key: "status", values: ["succeed"] }] });
  assert.equal(rules(vs), ["cursor.filter.values.enum"]);
  assert.is(vs[0]!.field, "filters[0].values[0]");
  assert.equal(rules(checkCursorQuery({ filters: [{ key: "status", values: "failed" }] })), ["cursor.filter.values.type"]);
  assert.equal(rules(checkCursorQuery({ filters: ["status"] })), ["cursor.filter.object"]);
});

test("B3: pageNum 1..1000 and pageSize 1..500 as integers; empty counts as absent", () => {
  assert.equal(checkImageList({}), []);
  assert.equal(checkImageList({ pageNum: "1", pageSize: "1" }), []);
  assert.equal(checkImageList({ pageNum: "1000", pageSize: "500" }), []);
  assert.equal(checkImageList({ pageNum: "", pageSize: "" }), []);
  assert.equal(rules(checkImageList({ pageNum: "1001" })), ["list.pageNum.range"]);
  assert.equal(rules(checkImageList({ pageNum: "0" })), ["list.pageNum.range"]);
  assert.equal(rules(checkImageList({ pageSize: "501" })), ["list.pageSize.range"]);
  assert.equal(rules(checkImageList({ pageSize: "-1" })), ["list.pageSize.range"]);
  assert.equal(rules(checkImageList({ pageSize: "2.5", pageNum: "x" })), ["list.pageNum.type", "list.pageSize.type"]);
});

test.run();
