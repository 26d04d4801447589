// The built CLI killed with SIGKILL during creates and early following (and at moments that
// fall on lockfile writes), then run again until done: the lockfile is valid after every
// kill, every external_task_id was created exactly once, every result is on disk.

import { killSuite } from "./killScenario.js";

killSuite(
  "kill -9 during creates and early following, then rerun",
  [{ creates: 1 }, { creates: 3 }, { creates: 6 }, { creates: 10 }, { afterMs: 600 }, { afterMs: 900 }],
  5,
);
