// What `omnibatch doctor` concludes from what it saw, pure: whether the video create path
// exists under the service's name (from the answer to a GET of it, a method it does not
// take: nothing is created), and which line is the first thing to fix.

/** One line of the doctor's report: `ok` true (✓), false (✗, `problem` says what to fix) or "unsure" (?, no problem). */
export interface DoctorLine {
  readonly check: "configuration" | "address" | "key" | "video" | "image" | "service name" | "outputs" | "manifest" | "models" | "plan";
  readonly ok: boolean | "unsure";
  readonly text: string;
  /** A user-facing error (its `_tag` decides the exit code, exit/ExitCode.ts), for a failed line. */
  readonly problem?: { readonly _tag: string; readonly message: string };
}

/** The answer to `GET <video create path>`, as far as the rule reads it. */
export interface RouteAnswer {
  readonly status: number;
  /** The envelope's code, when the body had one. */
  readonly code?: number | undefined;
  readonly message?: string | undefined;
  /** The `Allow` header, when sent. */
  readonly allow?: string | undefined;
}

/**
 * Whether the create path exists, from a GET of it (it takes POST only). The service's
 * table answers a wrong method on a known path and an unknown path alike (404, 1202), so
 * only what the answer adds tells them apart: an Allow header naming POST, a 405, or words
 * about the method say the path is known; words saying there is no such API (and no Allow)
 * say it is not. Anything else (a 401, a bare 1202) is "unsure": a run still stops at its
 * first refused create, with the line that says what to check.
 */
export const createPathVerdict = (a: RouteAnswer): "exists" | "missing" | "unsure" => {
  if (a.allow !== undefined && /\bPOST\b/i.test(a.allow)) return "exists";
  if (a.status === 405) return "exists";
  if (a.status === 401 || a.status === 403) return "unsure";
  const words = a.message ?? "";
  if (/no such|not found|does not exist|unknown (path|api|route)/i.test(words)) return "missing";
  if (/method/i.test(words)) return "exists";
  if (a.status >= 200 && a.status < 300) return "exists";
  return "unsure";
};

/** The first problem in the report's order, or undefined when all is well. */
export const firstProblem = (lines: readonly DoctorLine[]): DoctorLine | undefined => lines.find((l) => l.ok === false);

/** How a line is shown: a mark, the check, its text. */
export const formatDoctorLine = (l: DoctorLine): string => `${l.ok === true ? "✓" : l.ok === false ? "✗" : "?"} ${l.check}: ${l.text}`;
