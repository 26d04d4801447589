// Element ids above 2^53 end to end: the manifest's YAML keeps 829836802793406551 (the
// service's own example) exactly, the request carries it as a bigint, the client writes
// it as an exact JSON integer, and the emulator parses and accepts it exactly.

import { Effect, Either, Redacted } from "effect";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseExact, stringifyExact } from "../../src/api/exactJson.js";
import { OmniClient } from "../../src/api/OmniClient.js";
import type { ImageCreateRequest } from "../../src/protocol/wire.js";
import { startEmulator } from "../../src/emulator/Emulator.js";
import { loadManifest } from "../../src/manifest/loadManifest.js";
import { checkImageCreate } from "../../src/rules/index.js";
import { tempManifest } from "../manifest/tempManifest.js";
import { startCannedServer } from "./cannedServer.js";

const bigId = "829836802793406551";

test("stringifyExact writes bigints as plain JSON integers; parseExact reads long literals back exactly, never inside strings", () => {
  const text = stringifyExact({ element_list: [{ element_id: BigInt(bigId) }, { element_id: 42 }], note: `"${bigId}"` });
  assert.is(text, `{"element_list":[{"element_id":${bigId}},{"element_id":42}],"note":"\\"${bigId}\\""}`);
  const back = parseExact(text) as { element_list: { element_id: unknown }[]; note: string };
  assert.is(back.element_list[0]!.element_id, BigInt(bigId));
  assert.is(back.element_list[1]!.element_id, 42);
  assert.is(back.note, `"${bigId}"`);
  assert.equal(parseExact('{"a":[1.5e300,-9007199254740993,"x\\\\"]}'), { a: [1.5e300, -9007199254740993n, "x\\"] });
});

test("a manifest element id above 2^53 reaches the request exactly, and the rules accept it", async () => {
  const m = tempManifest(`version: 1
name: ids
elements:
  hero: { id: ${bigId} }
jobs:
  pic:
    kind: image
    prompt: "a portrait of <<<hero>>>"
    elements: { hero: hero }
  direct:
    kind: image
    prompt: "another of <<<h>>>"
    elements: { h: { id: ${bigId} } }
`);
  try {
    const manifest = await loadManifest(m.file);
    for (const t of manifest.tasks) {
      const req = t.request as ImageCreateRequest;
      assert.is(req.element_list?.[0]?.element_id, BigInt(bigId), t.id);
      assert.equal(checkImageCreate(req), []);
    }
  } finally {
    m.cleanup();
  }
});

test("the client sends the id as an exact JSON integer and the emulator accepts exactly that element", async () => {
  const canned = await startCannedServer();
  const emu = await startEmulator({ elements: [{ id: bigId, name: "hero", element_type: "multi_image_elements" }] });
  try {
    const req: ImageCreateRequest = { prompt: "a portrait of <<<element_1>>>", element_list: [{ element_id: BigInt(bigId) }], external_task_id: "exact-1" };
    const send = (baseUrl: string, apiKey: string) =>
      Effect.runPromise(Effect.scoped(Effect.flatMap(OmniClient.make({ baseUrl, apiKey: Redacted.make(apiKey) }), (c) => c.createImage(req))).pipe(Effect.either));
    await send(canned.url, "sk-exact-ids-key");
    assert.match(canned.seen[0]!.body, `"element_id":${bigId}}`);
    const created = await send(emu.url, emu.apiKey);
    assert.ok(Either.isRight(created), JSON.stringify(created));
    // One digit off (what a rounded number would send) names no element of the library.
    const off = { ...req, element_list: [{ element_id: BigInt(bigId) + 1n }], external_task_id: "exact-2" };
    const refused = await Effect.runPromise(
      Effect.scoped(Effect.flatMap(OmniClient.make({ baseUrl: emu.url, apiKey: Redacted.make(emu.apiKey) }), (c) => c.createImage(off))).pipe(Effect.either),
    );
    assert.ok(Either.isLeft(refused));
    assert.is((refused as Either.Left<{ code?: number }, unknown>).left.code, 1203);
  } finally {
    await emu.close();
    await canned.close();
  }
});

test.run();
