// The full scale scenario's bound, in a module of its own: the bench's parent process
// (run.ts) sets each scenario's time limit from it without loading the scenarios.

/** How long the full scale scenario may run (planning and its stop come on top): it is meant to run to completion. */
export const SCALE_BOUND_MS = 1_200_000;
