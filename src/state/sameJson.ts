// Whether two JSON-like values would serialise to the same lockfile bytes. The store
// uses it to skip puts that change nothing, so a run with nothing to do writes nothing
// and leaves the committed lockfile untouched.

export const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  // Keys whose value is undefined are not written, so they do not count.
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!sameJson(ra[k], rb[k])) return false;
  return true;
};
