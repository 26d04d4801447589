// CPU time for the test runner (test/run.mjs): a process's own (user + system) and that of
// every child process it waited for, so the CLI runs and emulators a test starts count toward
// the file that started them, read from /proc/self/stat. test/cpuReport.mjs prints it as a
// test process exits.

import { readFileSync, writeSync } from "node:fs";

/** CPU milliseconds of this process and of its waited-for children, or undefined off Linux. */
export const cpuMs = () => {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command name (which may hold spaces) in its parentheses: state is
    // field 3, so utime, stime, cutime and cstime (fields 14-17) are at 11-14. Clock ticks of 10 ms.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return undefined;
  }
};
