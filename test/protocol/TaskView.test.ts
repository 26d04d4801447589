// The service's two task shapes read one way: statuses in the lockfile's words, outputs
// per variant, watermark copies only when asked, content-risk failures recognised.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { fromImage, fromVideo, isContentRisk } from "../../src/protocol/TaskView.js";

test("service answers read as views: image `succeed` is succeeded, outputs per variant, watermark only when asked", () => {
  const v = fromVideo(
    {
      id: "1",
      status: "succeeded",
      message: "",
      create_time: 1,
      update_time: 2,
      outputs: [
        { type: "video", id: "o", url: "http://x/a.mp4", watermark_url: "http://x/w.mp4", duration: "5" },
        { type: "audio", id: "a", mp3_url: "http://x/a.mp3", wav_url: "http://x/a.wav", mp3_duration: "5", wav_duration: "5" },
        { type: "voice", id: "v", name: "n", url: "http://x/v", owned_by: "svc", status: "succeeded" },
      ],
      billing: [],
    },
    false,
  );
  assert.equal(v.outputs.map((o) => `${o.type}:${o.variant}`), ["video:main", "audio:mp3", "audio:wav", "voice:meta"]);
  const i = fromImage(
    {
      task_id: "9",
      task_status: "succeed",
      task_status_msg: "",
      task_info: { external_task_id: "x" },
      task_result: { result_type: "series", series_images: [{ index: 1, url: "http://x/1.png", watermark_url: "http://x/1w.png" }] },
      watermark_info: { enabled: true },
      final_unit_deduction: "0",
      final_balance_deduction: { quota: "0.04", list_price: "0.05" },
      created_at: 1,
      updated_at: 2,
    },
    true,
    "USD",
  );
  assert.is(i.status, "succeeded");
  assert.equal(i.outputs.map((o) => `${o.variant}:${o.group_id}`), ["main:9", "watermark:9"]);
  assert.equal(i.billing, [{ charge_type: "cash", amount: "0.04", list_price: "0.05", currency: "USD" }]);
  assert.ok(isContentRisk(undefined, "Task failed: flagged by content-risk review"));
  assert.ok(isContentRisk(1301, ""));
  assert.not.ok(isContentRisk(undefined, "internal error"));
});

test("a charge keeps only the fields the lockfile knows: one the service added is dropped, none named is lost", () => {
  const v = fromVideo(
    {
      id: "1",
      status: "succeeded",
      message: "",
      create_time: 1,
      update_time: 2,
      outputs: [],
      billing: [
        { charge_type: "cash", cash_type: "balance", amount: "0.35", currency: "USD", list_price: "0.5", discount: "0.15" } as never,
        { charge_type: "unit", amount: "2", package_type: "video", promo: { code: "X" } } as never,
      ],
    },
    false,
  );
  assert.equal(v.billing, [
    { charge_type: "cash", amount: "0.35", cash_type: "balance", currency: "USD", list_price: "0.5" },
    { charge_type: "unit", amount: "2", package_type: "video" },
  ]);
});

test.run();
