// GET /_files/{task}/{name}: a result file behind a signed, expiring link; the faults
// that bend it (a redirect, a slow or truncated transfer) and the retention rule.

import type { IncomingMessage, ServerResponse } from "node:http";
import { fail } from "./Answer.js";
import { sendAnswer } from "./AnswerWriter.js";
import type { EmulatorCore } from "./EmulatorCore.js";
import { resultFile } from "./ResultFiles.js";
import { phaseAt } from "./Task.js";
import { resultsDeleted } from "./TaskViews.js";

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const handleDownload = async (core: EmulatorCore, req: IncomingMessage, res: ServerResponse, path: string, search: string): Promise<void> => {
  const { config, store, faults } = core;
  core.countRequest("download");
  if (req.method !== "GET" && req.method !== "HEAD") return sendAnswer(core, res, fail(405, 1202, "result links answer GET only"), { allow: "GET" });
  const params = new URLSearchParams(search);
  const redirectTo = config.faults.resultRedirectTo;
  if (redirectTo !== "" && params.get("hop") === null) {
    // "self": one hop back to this emulator (marked so it is served the second time).
    const location = redirectTo === "self" ? `${path}?${search}&hop=1` : `${redirectTo}${path}?${search}`;
    res.writeHead(302, { location, "content-length": 0 });
    res.end();
    return;
  }
  const now = core.clock.now();
  const check = core.signer.check(path, params.get("expires"), params.get("sig"), now);
  if (!check.ok && check.reason === "tampered") return sendAnswer(core, res, fail(403, 1103, "result link signature is not valid (hotlink protection)"));
  const m = /^\/_files\/(\d+)\/([A-Za-z0-9.-]+)$/.exec(path);
  const task = m ? store.get(m[1]!) : undefined;
  if (!m || !task) return sendAnswer(core, res, fail(404, 1203, "no such result"));
  store.settle(now);
  if (phaseAt(task, now) !== "succeeded") return sendAnswer(core, res, fail(404, 1203, "no such result"));
  if (resultsDeleted(task, now, config)) {
    return sendAnswer(core, res, fail(404, 1203, `results of task ${task.id} were deleted ${config.results.retentionDays} days after generation`));
  }
  if (!check.ok) return sendAnswer(core, res, fail(403, 1103, "result link expired; query the task again for a fresh link"));
  let file;
  try {
    file = resultFile(task, m[2]!, config.results.extraOutputs);
  } catch (e) {
    return sendAnswer(core, res, fail(500, 5000, `emulator could not make the file: ${(e as Error).message}`));
  }
  if (!file) return sendAnswer(core, res, fail(404, 1203, "no such result"));
  const slow = faults.slowMs("download");
  if (slow > 0) await delay(slow);
  core.figures.downloads += 1;
  res.writeHead(200, { "content-type": file.contentType, "content-length": file.bytes.length, "cache-control": "private, no-store" });
  if (req.method === "HEAD") return void res.end();
  if (faults.truncateDownload()) {
    const half = file.bytes.subarray(0, Math.floor(file.bytes.length / 2));
    core.figures.bytesServed += half.length;
    res.write(half, () => res.destroy());
    return;
  }
  core.figures.bytesServed += file.bytes.length;
  res.end(file.bytes);
};
