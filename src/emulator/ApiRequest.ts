// One request to one of the six operations, once routed: the key checked, the faults
// drawn before and after (a reset, an error answer, a slow or stalled answer, an error
// after a create, tampered query answers), the body read, and the handler asked
// (ApiHandlers.ts: video create and queries, image create, get and list).

import type { IncomingMessage, ServerResponse } from "node:http";
import { fail, type Answer } from "./Answer.js";
import { echoInFailures, externalIdOf, malformTask, mapTaskItems, unrequestedTask } from "./AnswerTampering.js";
import { sendAnswer, sendStalled } from "./AnswerWriter.js";
import type { EndpointName } from "./EmulatorConfig.js";
import type { EmulatorCore } from "./EmulatorCore.js";
import { readJson } from "./RequestBody.js";

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Query answers as a misbehaving service sends them (faults.malformedTask, unrequestedTaskRate, echoAuthorization). */
const tamper = (core: EmulatorCore, endpoint: EndpointName, answer: Answer, auth: string): Answer => {
  const { faults, config } = core;
  let data = mapTaskItems(answer.data, (item) => (faults.malformed(endpoint, externalIdOf(item)) ? malformTask(item, config.faults.malformedTask.kind) : item));
  if (config.faults.echoAuthorization) data = mapTaskItems(data, (item) => echoInFailures(item, auth));
  if ((endpoint === "video.query" || endpoint === "image.get") && faults.unrequested(endpoint)) {
    const extra = unrequestedTask(endpoint === "video.query" ? "video" : "image", ++core.unrequestedSeq, core.clock.now());
    data = Array.isArray(data) ? [...data, extra] : extra;
  }
  return { ...answer, data };
};

/** What the operation's handler answers: a POST's JSON body, or a GET's query. Undefined when the body was answered already. */
const operationAnswer = async (core: EmulatorCore, req: IncomingMessage, res: ServerResponse, endpoint: EndpointName, imageId: string | undefined, search: string): Promise<Answer | undefined> => {
  const api = core.api;
  if (req.method === "POST") {
    const type = req.headers["content-type"];
    if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) {
      sendAnswer(core, res, fail(400, 1200, `Content-Type: must be application/json (got ${type === undefined ? "none" : `'${type.slice(0, 80)}'`})`));
      return undefined;
    }
    const body = await readJson(core, req, res);
    if (!body.ok) return undefined;
    return endpoint === "video.create" ? await api.createVideo(body.value) : endpoint === "image.create" ? await api.createImage(body.value) : api.queryCursor(body.value);
  }
  const params = new URLSearchParams(search);
  return endpoint === "video.query" ? api.queryVideos(params) : endpoint === "image.list" ? api.listImages(params) : api.getImage(imageId!);
};

export const handleApiRequest = async (core: EmulatorCore, req: IncomingMessage, res: ServerResponse, endpoint: EndpointName, imageId: string | undefined, search: string): Promise<void> => {
  const { faults } = core;
  core.countRequest(endpoint);
  const auth = req.headers.authorization;
  if (auth === undefined || auth.trim() === "") return sendAnswer(core, res, fail(401, 1001, "Authorization header is empty"));
  if (auth !== `Bearer ${core.config.apiKey}`) return sendAnswer(core, res, fail(401, 1002, "Authorization header is invalid"));
  faults.reseedIfChanged();
  const slow = faults.slowMs(endpoint);
  if (slow > 0) await delay(slow);
  const echo = (a: Answer): Answer => (core.config.faults.echoAuthorization && a.code !== 0 ? { ...a, message: `${a.message} (request Authorization: ${auth})` } : a);
  const fault = faults.before(endpoint);
  if (fault?.kind === "reset") {
    req.socket.destroy();
    return;
  }
  if (fault) return sendStalled(core, endpoint, req, res, echo(fail(fault.http, fault.code, fault.message)));
  let answer = await operationAnswer(core, req, res, endpoint, imageId, search);
  if (answer === undefined) return;
  if (res.destroyed || req.socket.destroyed) return;
  if (faults.resetAfter(endpoint)) {
    req.socket.destroy();
    return;
  }
  if ((endpoint === "video.create" || endpoint === "image.create") && answer.code === 0 && faults.errorAfterCreate(endpoint)) {
    answer = fail(500, 5000, "internal error (emulated, after the task was created)");
  }
  if (answer.code === 0 && (endpoint === "video.query" || endpoint === "video.cursor" || endpoint === "image.get" || endpoint === "image.list")) {
    answer = tamper(core, endpoint, answer, auth);
  }
  return sendStalled(core, endpoint, req, res, echo(answer));
};
