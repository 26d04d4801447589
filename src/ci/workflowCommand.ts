// GitHub Actions workflow commands (`::error file=…,line=…::message`, `::add-mask::`,
// step outputs): the escaping GitHub requires, as pure functions. Everything that knows
// the GitHub syntax lives here; callers hand in plain data.
// Escaping as in @actions/core's command.ts: data escapes %, \r, \n; property values also : and ,.

export type AnnotationLevel = "error" | "warning" | "notice";

export interface AnnotationProps {
  readonly file?: string;
  /** 1-based. */
  readonly line?: number;
  /** 1-based. */
  readonly col?: number;
  readonly title?: string;
}

/** A message (the part after `::`). */
export const escapeData = (s: string): string => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");

/** A property value (`file=`, `title=`): the data escapes plus `:` and `,`. */
export const escapeProperty = (s: string): string => escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");

/** One annotation line, e.g. `::error file=m.yaml,line=3,col=5::jobs.x.prompt: required`. */
export const annotation = (level: AnnotationLevel, message: string, props: AnnotationProps = {}): string => {
  const parts: string[] = [];
  if (props.file !== undefined && props.file !== "") parts.push(`file=${escapeProperty(props.file)}`);
  if (props.line !== undefined && props.line > 0) parts.push(`line=${props.line}`);
  if (props.col !== undefined && props.col > 0) parts.push(`col=${props.col}`);
  if (props.title !== undefined && props.title !== "") parts.push(`title=${escapeProperty(props.title)}`);
  return `::${level}${parts.length ? ` ${parts.join(",")}` : ""}::${escapeData(message)}`;
};

/** Asks the runner to hide a value in every later log line. Empty values are never masked (that would hide nothing useful). */
export const addMask = (value: string): string => `::add-mask::${escapeData(value)}`;

/** Whether the process runs as a GitHub Actions step. */
export const inGitHubActions = (env: NodeJS.ProcessEnv): boolean => env["GITHUB_ACTIONS"] === "true";

/**
 * One entry for a `$GITHUB_OUTPUT` / `$GITHUB_ENV` file. A single-line value is `name=value`;
 * a multi-line one uses a heredoc delimiter that cannot occur in the value.
 */
export const fileCommandEntry = (name: string, value: string, delimiter: () => string): string => {
  if (!/[\r\n]/.test(value)) return `${name}=${value}\n`;
  let d = delimiter();
  for (let i = 0; value.includes(d) && i < 10; i++) d = delimiter();
  if (value.includes(d)) throw new Error(`no delimiter found for the value of ${name}`);
  return `${name}<<${d}\n${value}\n${d}\n`;
};
