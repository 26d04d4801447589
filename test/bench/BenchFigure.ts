// One line of the benchmark table: a measured figure, its unit, and the goal it is held
// to (if any). Scenarios return these; run.ts prints them and writes them to JSON.

export interface BenchGoal {
  readonly op: "<=" | ">=";
  readonly target: number;
}

export interface BenchFigure {
  readonly scenario: string;
  readonly figure: string;
  readonly value: number;
  readonly unit: string;
  readonly goal?: BenchGoal;
  /** How it was measured or what it is compared with, in a few words. */
  readonly note?: string;
}

export interface ScenarioResult {
  readonly figures: readonly BenchFigure[];
  /** Everything else worth keeping in the JSON file (raw counts, settings). */
  readonly details: Record<string, unknown>;
}

export const passes = (f: BenchFigure): boolean | undefined =>
  f.goal === undefined ? undefined : f.goal.op === "<=" ? f.value <= f.goal.target : f.value >= f.goal.target;

export const round = (x: number, digits = 3): number => {
  const p = 10 ** digits;
  return Math.round(x * p) / p;
};
