// The command index: every command's name and one-line summary, in the order help lists
// them, as plain data. Apart from the registry (commands.ts, which adds how to load each
// command) so the launcher (launcher.ts) can print the program's help without loading
// anything else. test/cli/help.test.ts checks each summary is the command's own.

export const commandIndex = [
  {
    name: "init",
    summary: "Scaffold a starter: manifest, data file, scheduled GitHub workflow, .gitignore lines.",
  },
  {
    name: "validate",
    summary: "Check a manifest: schema, templates, matrix, every spec rule, local files.",
  },
  {
    name: "plan",
    summary: "Show what a run would create, compared with the lockfile, and its estimated cost.",
  },
  {
    name: "doctor",
    summary: "Check before the first paid run: the address, the key, the endpoints, the outputs, the models.",
  },
  {
    name: "run",
    summary: "Submit, follow, download and report until done, the time limit or the budget.",
  },
  {
    name: "pull",
    summary: "Copy results from the outputs store (s3://...) to a local folder, verified by sha256.",
  },
  {
    name: "status",
    summary: "Show the lockfile's view: counts per job and state, in flight, failures.",
  },
  {
    name: "review",
    summary: "Approve or reject the outputs of jobs marked review: a local page, or --approve/--reject/--list.",
  },
  {
    name: "report",
    summary: "Write the reports again from the lockfile (report.html, results.jsonl, billing.*).",
  },
  {
    name: "verify",
    summary: "Hash every recorded result against the lockfile; --fix fetches again what differs.",
  },
  {
    name: "prune",
    summary: "Remove superseded and orphaned tasks' files and records (shows them; --yes removes).",
  },
  {
    name: "emulator",
    summary: "Serve a local emulator of the generation service (free dry runs, CI).",
  },
] as const satisfies readonly { readonly name: string; readonly summary: string }[];

export type CommandName = (typeof commandIndex)[number]["name"];
