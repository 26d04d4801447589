// The callback signature function against the vector of service-behaviour.md.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { signWebhook } from "../../src/protocol/signWebhook.js";

const secret = "whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0MTI=";
const body = '{"id":"1234567890","status":"succeeded","message":"","create_time":1781080778802,"update_time":1781080794151}';

test("signWebhook reproduces the documented test vector", () => {
  assert.is(signWebhook(secret, "9876543210", 1781080794, body), "v1,UsKlJP00XoQyOn410NM9xv34sP+Gl0jnOO9Lcpr7NJ4=");
});

test("signWebhook changes when one byte of the body changes", () => {
  assert.is.not(signWebhook(secret, "9876543210", 1781080794, body.replace("succeeded", "succeedex")), "v1,UsKlJP00XoQyOn410NM9xv34sP+Gl0jnOO9Lcpr7NJ4=");
});

test("signWebhook changes with the timestamp and the message id", () => {
  const base = signWebhook(secret, "9876543210", 1781080794, body);
  assert.is.not(signWebhook(secret, "9876543210", 1781080795, body), base);
  assert.is.not(signWebhook(secret, "9876543211", 1781080794, body), base);
});

test.run();
