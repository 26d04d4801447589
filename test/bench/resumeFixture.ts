// Makes scenario 4's fixture alone (resume.ts makeResumeFixture) in a folder that is kept,
// so the rerun (resumeChild.mjs) can be measured or profiled again and again without
// making 100,000 files each time. A rerun with nothing to do sends no request, so the
// service address need not answer; it must only be the one the lockfile records.
// Usage: node --import tsx test/bench/resumeFixture.ts DIR [TASKS] [SERVICE_URL]
//   then: OMNIBATCH_API_KEY=x node test/bench/resumeChild.mjs DIR/bench-resume.yaml SERVICE_URL (the built dist/;
//   add `--import tsx` after node and `src` at the end for src/)

import { makeResumeFixture } from "./resume.js";

const [dir, count = "100000", url = "http://127.0.0.1:9"] = process.argv.slice(2);
if (!dir) {
  process.stderr.write("usage: resumeFixture.ts DIR [TASKS] [SERVICE_URL]\n");
  process.exit(2);
}
const made = await makeResumeFixture(dir, Number(count), url);
process.stdout.write(`${JSON.stringify({ ...made, serviceUrl: url })}\n`);
