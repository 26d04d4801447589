// Child-process entry of the benchmarks' emulator: starts it with the JSON config patch
// given as argv[2] on a free loopback port, prints one JSON line {url, apiKey}, and
// serves until SIGTERM, so the runner measured by a benchmark never shares its process.

import { startEmulator, type DeepPartial, type EmulatorConfig } from "../../src/emulator/Emulator.js";

const patch = JSON.parse(process.argv[2] ?? "{}") as DeepPartial<EmulatorConfig>;
const emulator = await startEmulator(patch, { host: "127.0.0.1", port: 0 });
process.stdout.write(`${JSON.stringify({ url: emulator.url, apiKey: emulator.apiKey })}\n`);

const stop = () => {
  void emulator.close().then(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// The parent holds our stdin open: when it dies (even by SIGKILL), stop too.
process.stdin.on("end", stop);
process.stdin.resume();
