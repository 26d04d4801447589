// What a network failure says, for a TransportError: its code and text, and whether it
// happened before any byte of the request left (nothing reached the service).

/** Network failures that happen before any byte of the request left: nothing reached the service. */
export const connectCodes: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL"]);

export const errorCode = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | null)?.code ?? (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof code === "string" ? code : undefined;
};

export const errorText = (error: unknown): string => {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
};

/** A URL fit for an error message: no query string (signed links carry signatures there). */
export const urlForMessage = (url: string): string => {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "(malformed URL)";
  }
};
