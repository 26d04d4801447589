// The built CLI killed with SIGKILL during downloads and downstream creates (and at moments that
// fall on lockfile writes), then run again until done: the lockfile is valid after every
// kill, every external_task_id was created exactly once, every result is on disk.

import { killSuite } from "./killScenario.js";

// Points are tied to progress the emulator sees, not to wall time, so a slow or busy
// machine still kills each run mid-way.
killSuite(
  "kill -9 during downloads and downstream creates, then rerun",
  [{ downloads: 1 }, { downloads: 3 }, { downloads: 5 }, { downloads: 8 }, { downloads: 12 }, { creates: 12 }],
  5,
);
