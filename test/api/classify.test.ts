// The error table of spec/service-behaviour.md, as classes: the envelope code decides,
// the HTTP status only when there is no code, and creates of unknown outcome are marked.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { DecodeError, RequestTimeout, ServiceError, TransportError, type Operation } from "../../src/api/ApiError.js";
import { classify, isMissingModel, isOutcomeUnknown } from "../../src/api/classify.js";

const service = (code: number | undefined, httpStatus: number, operation: Operation = "queryVideos") =>
  new ServiceError({ operation, code, httpStatus, message: "m", requestId: "r" });

const table: Array<[number, number, string]> = [
  [401, 1000, "refused"],
  [401, 1001, "refused"],
  [401, 1002, "refused"],
  [401, 1003, "refused"],
  [401, 1004, "refused"],
  [429, 1100, "refused"],
  [429, 1101, "refused"],
  [429, 1102, "refused"],
  [403, 1103, "refused"],
  [400, 1200, "task-rejected"],
  [400, 1201, "task-rejected"],
  [404, 1202, "refused"],
  [404, 1203, "task-rejected"],
  [400, 1300, "task-rejected"],
  [400, 1301, "task-rejected"],
  [429, 1302, "retry"],
  [429, 1303, "no-slot"],
  [429, 1304, "refused"],
  [500, 5000, "retry"],
  [503, 5001, "retry"],
  [504, 5002, "retry"],
];

test("every code of the service's error table has its class, for queries and creates", () => {
  for (const [status, code, expected] of table) {
    assert.is(classify(service(code, status)), expected, `query ${status}/${code}`);
    const forCreate = code >= 5000 ? "unknown-outcome" : expected;
    assert.is(classify(service(code, status, "createImage")), forCreate, `create ${status}/${code}`);
  }
});

test("the code wins over the status: 429 with 1102 is refused, 200 with 1303 is no-slot", () => {
  assert.is(classify(service(1102, 429)), "refused");
  assert.is(classify(service(1303, 200)), "no-slot");
});

test("without a code, 5xx, 408 and 429 are retry and other statuses task-rejected", () => {
  assert.is(classify(service(undefined, 502)), "retry");
  assert.is(classify(service(undefined, 408)), "retry");
  assert.is(classify(service(undefined, 429)), "retry");
  assert.is(classify(service(undefined, 403)), "task-rejected");
  assert.is(classify(service(undefined, 404, "download")), "task-rejected");
});

test("a download answered 403 1103 or 404 1203 is an unusable link, not a refused account", () => {
  assert.is(classify(service(1103, 403, "download")), "task-rejected");
  assert.is(classify(service(1203, 404, "download")), "task-rejected");
  assert.is(classify(service(1302, 429, "download")), "retry");
  assert.is(classify(service(undefined, 503, "download")), "retry");
});

test("unknown codes follow their family", () => {
  assert.is(classify(service(1150, 429)), "refused");
  assert.is(classify(service(1250, 400)), "task-rejected");
  assert.is(classify(service(5099, 500)), "retry");
});

test("a 5xx carrying a 1xxx code on a create means not created", () => {
  const error = service(1201, 500, "createVideo");
  assert.is(isOutcomeUnknown("createVideo", error), false);
  assert.is(classify(error), "task-rejected");
});

test("isOutcomeUnknown: creates on 5xx, timeout, or a connection lost after sending; never for queries", () => {
  const sent = new TransportError({ operation: "createVideo", phase: "sent", reason: "ECONNRESET" });
  const connect = new TransportError({ operation: "createVideo", phase: "connect", reason: "ECONNREFUSED" });
  const timeout = new RequestTimeout({ operation: "createImage", afterMs: 10, phase: "sent" });
  assert.is(isOutcomeUnknown("createVideo", sent), true);
  assert.is(isOutcomeUnknown("createVideo", connect), false);
  assert.is(isOutcomeUnknown("createImage", timeout), true);
  assert.is(isOutcomeUnknown("createVideo", service(undefined, 502, "createVideo")), true);
  assert.is(isOutcomeUnknown("createVideo", service(5002, 504, "createVideo")), true);
  assert.is(isOutcomeUnknown("queryVideos", service(5000, 500)), false);
  assert.is(isOutcomeUnknown("queryVideos", new TransportError({ operation: "queryVideos", phase: "sent", reason: "x" })), false);
  assert.is(classify(sent), "unknown-outcome");
  assert.is(classify(connect), "retry");
  assert.is(classify(new TransportError({ operation: "getImage", phase: "sent", reason: "x" })), "retry");
});

test("a DecodeError is retry for a query and unknown-outcome for a create answered 200", () => {
  const decode = (operation: Operation, httpStatus: number) => new DecodeError({ operation, httpStatus, requestId: "r", problems: "p" });
  assert.is(classify(decode("listImages", 200)), "retry");
  assert.is(classify(decode("createVideo", 200)), "unknown-outcome");
});

test("a 1203 on a create naming the model stops the run (refused); one naming an element, or a query's 1203, is about that task", () => {
  const create1203 = (message: string, operation: Operation = "createImage") => new ServiceError({ operation, code: 1203, httpStatus: 404, message, requestId: "r" });
  assert.is(classify(create1203("model_name: model 'svc-image-o1' does not exist")), "refused");
  assert.is(classify(create1203("The model kling-o1 has been discontinued", "createVideo")), "refused");
  assert.is(isMissingModel(create1203("Model not found")), true);
  // The words quoted are ours (a prompt, an id): they cannot make it a model's answer.
  assert.is(classify(create1203("element_list[0].element_id: no element '829836802793406551'")), "task-rejected");
  assert.is(classify(create1203("resource 'model-of-a-ship' does not exist")), "task-rejected");
  assert.is(classify(create1203("resource does not exist")), "task-rejected");
  assert.is(classify(new ServiceError({ operation: "getImage", code: 1203, httpStatus: 404, message: "no model task", requestId: "r" })), "task-rejected");
  assert.is(classify(new ServiceError({ operation: "download", code: 1203, httpStatus: 404, message: "model", requestId: "r" })), "task-rejected");
});

test("a 1202 (no such API) stops the run whatever asked, except a result link (an unusable link)", () => {
  for (const op of ["createVideo", "createImage", "queryVideos", "cursorVideos", "getImage", "listImages"] as const) {
    assert.is(classify(service(1202, 404, op)), "refused", op);
  }
  assert.is(classify(service(1202, 404, "download")), "task-rejected");
});

test("error messages say what happened", () => {
  assert.is(new RequestTimeout({ operation: "getImage", afterMs: 250, phase: "sent" }).message, "getImage: no answer within 250 ms");
  assert.is(
    new TransportError({ operation: "createVideo", phase: "sent", reason: "ECONNRESET: socket hang up" }).message,
    "createVideo: network error after the request was sent: ECONNRESET: socket hang up",
  );
  assert.match(new DecodeError({ operation: "listImages", httpStatus: 200, requestId: "rq", problems: "/data: must be array" }).message, "request rq");
});

test.run();
