// CSV as a matrix axis: a header row, then one row per value (an object keyed by the
// header). RFC 4180 quoting ("" inside quotes), CRLF or LF, UTF-8 with or without BOM.
// Problems come back with the CSV line and column they are on.
// A data file is untrusted input: a row, a field and the number of columns are bounded
// (the limits below), so a file under the 256 MB cap that is one long line stops with
// `file:line:col` at once instead of building strings until the heap runs out.

/** The longest field, in characters (a product description is a few thousand). */
export const MAX_CSV_FIELD_CHARS = 1024 * 1024;
/** The longest row (record), in characters, its quoted line breaks included. */
export const MAX_CSV_ROW_CHARS = 4 * 1024 * 1024;
/** The most columns a row may have. */
export const MAX_CSV_COLUMNS = 1000;

/** Runs of characters with no meaning inside a quoted field, and outside one (sticky: matched at lastIndex). */
const QUOTED_RUN = /[^"\n]+/y;
const PLAIN_RUN = /[^,"\r\n]+/y;

export interface CsvRows {
  readonly header: readonly string[];
  readonly rows: Record<string, string>[];
  /** 1-based line on which each row starts. */
  readonly lines: number[];
}

export interface CsvProblem {
  readonly line: number;
  readonly col: number;
  readonly message: string;
}

export const parseCsv = (input: string): CsvRows | CsvProblem[] => {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const records: { fields: string[]; line: number }[] = [];
  let fields: string[] = [];
  let field = "";
  let line = 1;
  let col = 1;
  let recordLine = 1;
  let inQuotes = false;
  let quoteLine = 0;
  let quoteCol = 0;
  let fieldStarted = false;
  /** Where the current record began (an index into `text`), and the current field (its line and column). */
  let recordStart = 0;
  let fieldLine = 1;
  let fieldCol = 1;
  const problems: CsvProblem[] = [];
  const tooLong = (): CsvProblem[] => {
    if (field.length > MAX_CSV_FIELD_CHARS) {
      return [{ line: fieldLine, col: fieldCol, message: `a field longer than ${MAX_CSV_FIELD_CHARS} characters: is this a CSV file? (a field holds at most ${MAX_CSV_FIELD_CHARS} characters)` }];
    }
    return [{ line: recordLine, col: 1, message: `a row longer than ${MAX_CSV_ROW_CHARS} characters: is this a CSV file? (a row holds at most ${MAX_CSV_ROW_CHARS} characters)` }];
  };
  const endRecord = () => {
    fields.push(field);
    // A line with nothing on it is not a row.
    if (!(fields.length === 1 && fields[0] === "" && !fieldStarted)) records.push({ fields, line: recordLine });
    fields = [];
    field = "";
    fieldStarted = false;
  };
  for (let i = 0; i < text.length; i++) {
    // Bounds, checked as the text is read (a field only grows by one character at a time,
    // or two for a doubled quote, so the checks catch it just over its limit).
    if (field.length > MAX_CSV_FIELD_CHARS || i - recordStart > MAX_CSV_ROW_CHARS) return tooLong();
    const c = text[i]!;
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
          col += 2;
          continue;
        }
        inQuotes = false;
        col++;
        const next = text[i + 1];
        if (next !== undefined && next !== "," && next !== "\n" && next !== "\r") {
          problems.push({ line, col, message: "unexpected text after a closing quote (a quote inside a quoted field is written \"\")" });
          return problems;
        }
        continue;
      }
      if (c === "\n") {
        line++;
        col = 1;
        field += c;
        continue;
      }
      // A run of plain characters taken as one slice (a character at a time cost seconds a MB).
      QUOTED_RUN.lastIndex = i;
      const run = QUOTED_RUN.exec(text)![0];
      field += run;
      col += run.length;
      i += run.length - 1;
      continue;
    }
    if (c === '"') {
      if (field !== "") {
        problems.push({ line, col, message: "a quote in the middle of an unquoted field; quote the whole field and write the quote as \"\"" });
        return problems;
      }
      inQuotes = true;
      fieldStarted = true;
      quoteLine = line;
      quoteCol = col;
      col++;
    } else if (c === ",") {
      fields.push(field);
      if (fields.length >= MAX_CSV_COLUMNS) {
        return [{ line, col, message: `more than ${MAX_CSV_COLUMNS} columns in a row: is this a CSV file? (a row holds at most ${MAX_CSV_COLUMNS} fields)` }];
      }
      field = "";
      fieldStarted = true;
      col++;
      fieldLine = line;
      fieldCol = col;
    } else if (c === "\r" && text[i + 1] === "\n") {
      continue;
    } else if (c === "\n") {
      endRecord();
      line++;
      col = 1;
      recordLine = line;
      recordStart = i + 1;
      fieldLine = line;
      fieldCol = 1;
    } else {
      PLAIN_RUN.lastIndex = i;
      const run = PLAIN_RUN.exec(text)?.[0] ?? c;
      field += run;
      fieldStarted = true;
      col += run.length;
      i += run.length - 1;
    }
  }
  if (field.length > MAX_CSV_FIELD_CHARS || text.length - recordStart > MAX_CSV_ROW_CHARS) return tooLong();
  if (inQuotes) return [{ line: quoteLine, col: quoteCol, message: "unclosed quote: the file ends inside a quoted field" }];
  if (field !== "" || fields.length > 0 || fieldStarted) endRecord();
  if (records.length === 0) return [{ line: 1, col: 1, message: "empty CSV file: expected a header row" }];
  const header = records[0]!.fields.map((h) => h.trim());
  const seen = new Map<string, number>();
  header.forEach((h, i) => {
    if (h === "") problems.push({ line: records[0]!.line, col: 1, message: `column ${i + 1} of the header row has no name` });
    else if (seen.has(h)) problems.push({ line: records[0]!.line, col: 1, message: `column name '${h}' appears twice in the header row` });
    else if (h === "__proto__") problems.push({ line: records[0]!.line, col: 1, message: "column name '__proto__' cannot be used (JavaScript reserves it): rename the column" });
    seen.set(h, i);
  });
  const rows: Record<string, string>[] = [];
  const lines: number[] = [];
  for (const r of records.slice(1)) {
    if (r.fields.length !== header.length) {
      problems.push({
        line: r.line,
        col: 1,
        message: `row has ${r.fields.length} field(s) but the header has ${header.length}`,
      });
      continue;
    }
    const row: Record<string, string> = {};
    header.forEach((h, i) => (row[h] = r.fields[i]!));
    rows.push(row);
    lines.push(r.line);
  }
  return problems.length ? problems : { header, rows, lines };
};
