// Media limits on both sides of every bound: the committed fixtures for pixels, ratios,
// durations and frame rates; synthetic probe results for byte sizes.

import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  checkImageMedia,
  checkVideoMedia,
  describeProbeFailure,
  probeImage,
  probeVideo,
  type ImageInfo,
  type VideoInfo,
  type Violation,
} from "../../src/rules/index.js";

const DIR = new URL("../fixtures/media/", import.meta.url);
const load = (name: string) => new Uint8Array(readFileSync(new URL(name, DIR)));
const rules = (vs: Violation[]) => vs.map((v) => v.rule);
const MB = 1024 * 1024;

const image = (name: string): ImageInfo => {
  const info = probeImage(load(name));
  if (info.kind !== "image") throw new Error(`${name}: ${info.reason}`);
  return info;
};
const video = (name: string): VideoInfo => {
  const info = probeVideo(load(name));
  if (info.kind !== "video") throw new Error(`${name}: ${info.reason}`);
  return info;
};

test("images: 300 px passes and 299 px fails, on both sides and in both formats", () => {
  for (const ext of ["png", "jpg"]) {
    for (const side of ["video", "image"] as const) {
      assert.equal(checkImageMedia(image(`img_300x300.${ext}`), side, "f"), []);
      const vs = checkImageMedia(image(`img_299x299.${ext}`), side, "contents[1].url");
      assert.equal(rules(vs), ["media.image.dimensions"]);
      assert.is(vs[0]!.message, "contents[1].url: image width and height must each be at least 300 px (got 299x299)");
    }
  }
});

test("images: ratios 2.5:1 and 1:2.5 pass, 2.6:1 and 1:2.6 fail", () => {
  for (const ext of ["png", "jpg"]) {
    assert.equal(checkImageMedia(image(`img_750x300.${ext}`), "video", "f"), []);
    assert.equal(checkImageMedia(image(`img_300x750.${ext}`), "image", "f"), []);
    assert.equal(rules(checkImageMedia(image(`img_780x300.${ext}`), "video", "f")), ["media.image.ratio"]);
    assert.equal(rules(checkImageMedia(image(`img_300x780.${ext}`), "image", "f")), ["media.image.ratio"]);
  }
});

test("images: 50 MB passes and 50 MB + 1 byte fails on the video side; 10 MB on the image side", () => {
  const at = (bytes: number): ImageInfo => ({ kind: "image", format: "png", width: 1000, height: 1000, bytes });
  assert.equal(checkImageMedia(at(50 * MB), "video", "f"), []);
  assert.equal(rules(checkImageMedia(at(50 * MB + 1), "video", "f")), ["media.image.size"]);
  assert.equal(checkImageMedia(at(10 * MB), "image", "f"), []);
  const vs = checkImageMedia(at(10 * MB + 1), "image", "image_list[0].image");
  assert.equal(rules(vs), ["media.image.size"]);
  assert.is(vs[0]!.message, "image_list[0].image: image must be at most 10 MB (got 10.0 MB)");
  assert.equal(checkImageMedia(at(11 * MB), "video", "f"), [], "11 MB is fine for a video task's image");
});

test("videos: the lower bounds pass in both containers", () => {
  for (const ext of ["mp4", "mov"]) assert.equal(checkVideoMedia(video(`vid_700x700_3s_24fps.${ext}`), "f"), []);
});

test("videos: 699 px fails in either direction, 2160 passes, 2161 fails", () => {
  for (const ext of ["mp4", "mov"]) {
    assert.equal(rules(checkVideoMedia(video(`vid_699x700_3s_24fps.${ext}`), "f")), ["media.video.dimensions"]);
    assert.equal(rules(checkVideoMedia(video(`vid_700x699_3s_24fps.${ext}`), "f")), ["media.video.dimensions"]);
    assert.equal(checkVideoMedia(video(`vid_2160x700_3s_24fps.${ext}`), "f"), []);
    const vs = checkVideoMedia(video(`vid_2161x700_3s_24fps.${ext}`), "contents[0].url");
    assert.equal(rules(vs), ["media.video.dimensions"]);
    assert.is(vs[0]!.message, "contents[0].url: video width and height must each be from 700 to 2160 px (got 2161x700)");
  }
});

test("videos: 2.9 s fails, 3.0 and 10.0 s pass, 10.1 s fails", () => {
  for (const ext of ["mp4", "mov"]) {
    assert.equal(rules(checkVideoMedia(video(`vid_700x700_2.9s_24fps.${ext}`), "f")), ["media.video.duration"]);
    assert.equal(checkVideoMedia(video(`vid_700x700_10s_24fps.${ext}`), "f"), []);
    const vs = checkVideoMedia(video(`vid_700x700_10.1s_24fps.${ext}`), "f");
    assert.equal(rules(vs), ["media.video.duration"]);
    assert.is(vs[0]!.message, "f: video must last from 3 to 10 s (got 10.125 s)");
  }
});

test("videos: 23 fps fails, 24 and 60 pass, 61 fails", () => {
  for (const ext of ["mp4", "mov"]) {
    assert.equal(rules(checkVideoMedia(video(`vid_700x700_3s_23fps.${ext}`), "f")), ["media.video.fps"]);
    assert.equal(checkVideoMedia(video(`vid_700x700_3s_60fps.${ext}`), "f"), []);
    assert.equal(rules(checkVideoMedia(video(`vid_700x700_3s_61fps.${ext}`), "f")), ["media.video.fps"]);
  }
});

const clip = (over: Partial<VideoInfo>): VideoInfo => ({
  kind: "video",
  container: "mp4",
  width: 1280,
  height: 720,
  durationSec: 5,
  fps: 24,
  bytes: 1000,
  ...over,
});

test("videos: 200 MB passes, 200 MB + 1 byte fails", () => {
  assert.equal(checkVideoMedia(clip({ bytes: 200 * MB }), "f"), []);
  assert.equal(rules(checkVideoMedia(clip({ bytes: 200 * MB + 1 }), "f")), ["media.video.size"]);
});

test("videos: container tick rounding is tolerated, a real excess is not", () => {
  assert.equal(checkVideoMedia(clip({ fps: 24000 / 1001 }), "f"), [], "NTSC film rate 23.976 counts as 24");
  assert.equal(checkVideoMedia(clip({ fps: 60000 / 1001 }), "f"), []);
  assert.equal(checkVideoMedia(clip({ durationSec: 10.02 }), "f"), []);
  assert.equal(checkVideoMedia(clip({ durationSec: 2.98 }), "f"), []);
  assert.equal(rules(checkVideoMedia(clip({ durationSec: 10.05 }), "f")), ["media.video.duration"]);
  assert.equal(rules(checkVideoMedia(clip({ fps: 23.9 }), "f")), ["media.video.fps"]);
});

test("all video violations are reported at once", () => {
  const vs = checkVideoMedia(clip({ width: 640, durationSec: 12, fps: 30 * 3, bytes: 300 * MB }), "f");
  assert.equal(rules(vs), ["media.video.size", "media.video.duration", "media.video.dimensions", "media.video.fps"]);
});

test("a probe failure becomes one format violation naming the accepted formats", () => {
  const v = describeProbeFailure({ kind: "unreadable", reason: "not a PNG or JPEG file" }, "contents[2].url");
  assert.equal(v, {
    field: "contents[2].url",
    rule: "media.image.format",
    message: "contents[2].url: image must be a readable jpg/jpeg or png file (not a PNG or JPEG file)",
    code: 1201,
  });
  assert.is(describeProbeFailure({ kind: "unreadable", reason: "x" }, "f", "video").rule, "media.video.format");
  assert.match(describeProbeFailure({ kind: "unreadable", reason: "x" }, "f", "video").message, /mp4 or mov/);
});

test.run();
