// CPU time (user + system, ms) another process has used so far, from /proc/PID/stat
// (Linux; NaN elsewhere): the bench reads the emulator's, so a scenario can say whether
// the runner or the emulator it talks to is the one that limits the rate.

import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

export const processCpuMs = (pid: number): number => {
  try {
    // The fields after the command name (which may hold spaces) start at the state, field 3.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").at(-1)!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
};
