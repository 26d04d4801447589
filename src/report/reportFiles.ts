// The names of the report files, apart from writeReports so that a reader of them does
// not load every report formatter.

export const REPORT_FILES = ["results.jsonl", "billing.csv", "billing.json", "billing.md", "report.html"] as const;

/** Beside the reports: the digest of the lockfile content they were last made from. */
export const REPORT_SOURCE_FILE = ".reports-source";
