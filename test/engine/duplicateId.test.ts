// When a 1201 means "this external id is in use" (createRules.ts `isDuplicateId`): only
// when the service's own words say so. Our id, echoed anywhere in the message, proves
// nothing: a 1201 about another parameter may quote it. Unit cases, then properties over
// seeded random ids and messages (machine.ts `seeded`; a failure names its seed).

import { test } from "uvu";
import * as assert from "uvu/assert";
import { afterCreateError, isDuplicateId } from "../../src/engine/createRules.js";
import { makePolicy } from "../../src/policy/Policy.js";
import { seeded, type Random } from "./machine.js";

const policy = makePolicy(1);
const ID = "spring-stills-uz4dag2fscz7gi2di7fr";
const e1201 = (message: string) => ({ errorClass: "task-rejected" as const, code: 1201, message });
const attempt = { id: ID, sends: 0, linkRefreshes: 0, sendFailures: 0, downstream: false };

test("the emulator's and the usual wordings of a reused external id are duplicates", () => {
  for (const message of [
    `options.external_task_id: '${ID}' is already used by task 7000000000000001; custom task ids are unique within the account`,
    `external_task_id: '${ID}' is already used by task 7000000000000001; custom task ids are unique within the account`,
    `external_task_id ${ID} already exists`,
    // The live service's words (spec/service-behaviour.md), as the emulator now answers by default.
    `External_task_id ${ID} already exists`,
    "the external task id is already in use",
    "Duplicate external_id",
    "external_task_id must be unique",
  ]) {
    assert.ok(isDuplicateId(e1201(message), ID), message);
    assert.equal(afterCreateError(e1201(message), attempt, policy), { _tag: "Unknown", exists: true }, message);
  }
});

test("a 1201 about another parameter that quotes our id is not a duplicate: looked up once, then rejected", () => {
  for (const message of [
    `prompt: the word 'chair' is not allowed for task ${ID}`,
    `invalid parameter ${ID}`,
    `aspect_ratio: 'auto' cannot be used without reference images (task ${ID})`,
    `image_list[0].image: https://cdn.example/${ID}/already-used.png could not be fetched`,
    `prompt: the word 'chair' is not allowed for task ${ID}; external_task_id ${ID} already used in this request log`,
    `prompt: '${ID} external_task_id already exists' is not a prompt`,
    `callback_url: '${ID}' is already in use elsewhere`,
  ]) {
    assert.not.ok(isDuplicateId(e1201(message), ID), message);
    assert.equal(afterCreateError(e1201(message), attempt, policy), { _tag: "Lookup", then: { _tag: "Rejected" } }, message);
  }
});

test("our id is taken out as a whole word only: a short id is no part of the words around it", () => {
  assert.ok(isDuplicateId(e1201("external_task_id x already exists"), "x"));
  assert.ok(isDuplicateId(e1201("options.external_task_id: 'd' is already used by task 7"), "d"));
  assert.not.ok(isDuplicateId(e1201("prompt: x is already used (external_task_id x)"), "x"));
});

test("the external id's own format errors, and other codes, are not duplicates", () => {
  assert.not.ok(isDuplicateId(e1201("external_task_id: must be at most 64 characters"), ID));
  assert.not.ok(isDuplicateId({ ...e1201(`external_task_id ${ID} already exists`), code: 1200 }, ID));
  assert.not.ok(isDuplicateId({ ...e1201(`external_task_id ${ID} already exists`), code: 1301 }, ID));
});

// Properties over random ids and messages.

const letters = "abcdefghijklmnopqrstuvwxyz0123456789";
const randomId = (r: Random): string => {
  let hash = "";
  for (let i = 0; i < 20; i++) hash += r.pick([...letters]);
  return `${r.pick(["spring", "cat", "a-b_c"])}-${r.pick(["stills", "clips", "x"])}-${hash}`;
};
const otherFields = ["prompt", "image_list[0].image", "aspect_ratio", "settings.duration", "contents[1].url", "callback_url", "element_list[0].element_id", "n"];
const phrases = [
  "is invalid",
  "already exists",
  "is already used",
  "must be unique",
  "duplicate value",
  "is in use",
  "could not be fetched",
  "external_task_id already exists",
  "the external task id is already in use",
  "not allowed",
];
const duplicateWords = [
  "external_task_id: '{id}' is already used by task 7000000000000001",
  "options.external_task_id: '{id}' is already used; custom task ids are unique within the account",
  "external_task_id {id} already exists",
  "external task id already in use",
  "duplicate external_id {id}",
];
const quoteOf = (r: Random, text: string): string => {
  const q = r.pick(["'", '"', "`"]);
  return `${q}${text}${q}`;
};

/** A 1201 about another parameter: its field first, then words, our id quoted or not anywhere, quoted values of any kind. */
const aboutAnotherField = (r: Random, id: string): string => {
  const parts: string[] = [`${r.pick(otherFields)}:`];
  for (let i = 0, n = 1 + r.int(5); i < n; i++) {
    const k = r.int(4);
    parts.push(k === 0 ? r.pick(phrases) : k === 1 ? id : k === 2 ? quoteOf(r, `${r.pick(phrases)} ${id}`) : `(task ${id})`);
  }
  return parts.join(" ");
};

test("property: a 1201 that names another field first is never a duplicate, whatever it quotes (our id, 'already exists', 'external_task_id')", () => {
  for (let seed = 1; seed <= 500; seed++) {
    const r = seeded(seed);
    const id = randomId(r);
    const message = aboutAnotherField(r, id);
    assert.not.ok(isDuplicateId(e1201(message), id), `seed ${seed}: ${message}`);
    const step = afterCreateError(e1201(message), { ...attempt, id }, policy);
    assert.is(step._tag, "Lookup", `seed ${seed}: ${message}`);
  }
});

test("property: echoing our id, at any place between words, never changes the verdict", () => {
  for (let seed = 1; seed <= 500; seed++) {
    const r = seeded(seed);
    const id = randomId(r);
    const base = r.chance(0.5) ? r.pick(duplicateWords).replaceAll("{id}", "").replace(/''/, "") : aboutAnotherField(r, "").replace(/\s+/g, " ");
    const words = base.split(" ");
    const echoed: string[] = [];
    for (const w of words) {
      echoed.push(w);
      if (r.chance(0.3)) echoed.push(r.chance(0.5) ? id : quoteOf(r, id));
    }
    const message = echoed.join(" ");
    assert.is(isDuplicateId(e1201(message), id), isDuplicateId(e1201(base), id), `seed ${seed}: '${base}' vs '${message}'`);
  }
});

test("property: a duplicate answer is recognised whatever id it names, and only for code 1201", () => {
  for (let seed = 1; seed <= 500; seed++) {
    const r = seeded(seed);
    const id = randomId(r);
    const message = r.pick(duplicateWords).replaceAll("{id}", r.chance(0.5) ? id : randomId(r));
    assert.ok(isDuplicateId(e1201(message), id), `seed ${seed}: ${message}`);
    assert.not.ok(isDuplicateId({ ...e1201(message), code: r.pick([1200, 1202, 1203, 1300, 1301, 5000]) }, id), `seed ${seed}: ${message}`);
  }
});

test.run();
