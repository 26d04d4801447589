// Large reports (results.jsonl, billing.csv, report.html of 200,000 tasks: 16 to 85 MB of
// text each) are written from their parts gathered into chunks of about 1 MB, made as the
// writer asks for them (writeFileAtomicChunks), so a report's whole text, and the rows it
// is made from, are never held at once.

/** Characters per chunk (about 1 MB of ASCII). */
export const REPORT_CHUNK_CHARS = 1 << 20;

/** The parts' concatenation in chunks of about `chunkChars` characters (no empty chunk). */
export function* inChunks(parts: Iterable<string>, chunkChars = REPORT_CHUNK_CHARS): Generator<string, void, undefined> {
  let chunk = "";
  for (const part of parts) {
    chunk += part;
    if (chunk.length >= chunkChars) {
      yield chunk;
      chunk = "";
    }
  }
  if (chunk.length > 0) yield chunk;
}
