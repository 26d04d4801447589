// `omnibatch doctor [M.yaml]`: the check before the first paid run (src/run/doctor.ts does
// it). Prints one line per check and exits 0 when all is well, else with the code of the
// first problem, named again last as the first thing to fix.

import { defineCommand } from "../Command.js";
import { commonOptions, serviceNameOf } from "../commonOptions.js";
import { ExitCode, exitCodeFor } from "../../exit/ExitCode.js";
import { outputsOption, withOutputs } from "../outputsOption.js";
import { doctor } from "../../run/doctor.js";
import { firstProblem, formatDoctorLine } from "../../run/doctorRules.js";
import { neutralise } from "../../api/neutralise.js";

export const doctorCommand = defineCommand({
  name: "doctor",
  summary: "Check before the first paid run: the address, the key, the endpoints, the outputs, the models.",
  usage: "omnibatch doctor [manifest.yaml] [--base-url URL] [--service NAME] [--outputs DIR|URL]",
  description:
    "Sends only requests that create nothing and cost nothing (a list of one page of one image,\n" +
    "a query of videos and one of an image by an id no task has, a GET of the video create path)\n" +
    "and says, one line each: the address answers, the key is accepted, both products' endpoints\n" +
    "answer, the video create path exists under the service's name, and the outputs folder or\n" +
    "store can be used. With a manifest, also: its models are this service's, and what a run\n" +
    "would create first. The key is never printed.\n" +
    "Exit 0 when all is well, else the code of the first problem (2: configuration, manifest or\n" +
    "outputs; 5: the address, the key or the service's name), named last as the first thing to fix.",
  options: {
    "base-url": commonOptions["base-url"],
    service: commonOptions.service,
    outputs: outputsOption,
  },
  positionals: { min: 0, max: 1, name: "manifest" },
  run: async (args, io) => {
    const v = args.values;
    const outputs = typeof v.outputs === "string" ? withOutputs({ outputsDir: "" }, v, io.cwd, "doctor").outputsDir : undefined;
    const lines = await doctor({
      manifest: args.positionals[0],
      baseUrl: typeof v["base-url"] === "string" ? v["base-url"] : undefined,
      outputs,
      env: io.env,
      cwd: io.cwd,
      client: { service: serviceNameOf(v, io.env) },
    });
    // What the service said (and names from the manifest) is inert on a terminal.
    for (const l of lines) io.stdout.write(`${neutralise(formatDoctorLine(l))}\n`);
    const first = firstProblem(lines);
    if (!first?.problem) {
      io.stdout.write("all well: nothing found to fix before a run\n");
      return ExitCode.Ok;
    }
    io.stderr.write(`omnibatch doctor: first to fix: ${neutralise(`${first.check}: ${first.text}`)}\n`);
    return exitCodeFor(first.problem);
  },
});
