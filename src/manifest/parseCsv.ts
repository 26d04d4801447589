// CSV as a matrix axis: a header row, then one row per value (an object keyed by the
// header). RFC 4180 quoting ("" inside quotes), CRLF or LF, UTF-8 with or without BOM.
// Problems come back with the CSV line they are on.

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
  const problems: CsvProblem[] = [];
  const endRecord = () => {
    fields.push(field);
    // A line with nothing on it is not a row.
    if (!(fields.length === 1 && fields[0] === "" && !fieldStarted)) records.push({ fields, line: recordLine });
    fields = [];
    field = "";
    fieldStarted = false;
  };
  for (let i = 0; i < text.length; i++) {
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
      } else col++;
      field += c;
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
      field = "";
      fieldStarted = true;
      col++;
    } else if (c === "\r" && text[i + 1] === "\n") {
      continue;
    } else if (c === "\n") {
      endRecord();
      line++;
      col = 1;
      recordLine = line;
    } else {
      field += c;
      fieldStarted = true;
      col++;
    }
  }
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
