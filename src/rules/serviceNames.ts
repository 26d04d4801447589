// The service's own name and the model names made from it. The spec writes `svc` where
// the service's name is part of an identifier; the real service is Kling's and says
// `kling` (spec/service-behaviour.md, docs/real-service.md): the video create path is
// /omni-video/kling-o1, the image models kling-image-o1 (its default) and kling-v3-omni.
// A gateway or another deployment may use another name (OMNIBATCH_SERVICE, --service).

/** The real service's name: the default everywhere a name is needed. */
export const DEFAULT_SERVICE = "kling";

/** The spec's placeholder name, which no real service answers to; older emulators and lockfiles used it. */
export const SPEC_SERVICE = "svc";

/** What a service name may hold: it becomes part of a path segment and of model names. */
export const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** What a video model name (the create path's last segment) may hold. */
export const VIDEO_MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The video model a create goes to when a job names none: `<service>-o1`. */
export const defaultVideoModel = (service = DEFAULT_SERVICE): string => `${service}-o1`;

/** The image models of the service, its default first. */
export const imageModelNames = (service = DEFAULT_SERVICE): readonly string[] => [`${service}-image-o1`, `${service}-v3-omni`];

/**
 * The name this service most likely means by `model`: the same model under this
 * service's name (`svc-image-o1` -> `kling-image-o1`), else a known name differing by
 * letter case or a typo or two; undefined when none is close.
 */
export const suggestModel = (model: string, known: readonly string[], service = DEFAULT_SERVICE): string | undefined => {
  const lower = model.toLowerCase();
  const dash = lower.indexOf("-");
  if (dash > 0) {
    const renamed = `${service}${lower.slice(dash)}`;
    const hit = known.find((k) => k.toLowerCase() === renamed);
    if (hit) return hit;
  }
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
};

/**
 * A video model the service may not have: one named for another service (`svc-o1` while
 * the service is `kling`) gets the same model under this service's name; undefined when
 * the name is this service's (a model added after this release is sent as named).
 */
export const foreignVideoModel = (model: string, service = DEFAULT_SERVICE): string | undefined => {
  const dash = model.indexOf("-");
  if (dash <= 0 || model.slice(0, dash).toLowerCase() === service.toLowerCase()) return undefined;
  return `${service}${model.slice(dash)}`;
};

/** Levenshtein distance, for short names only. */
const editDistance = (a: string, b: string): number => {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
};

/**
 * The service's name as OMNIBATCH_SERVICE gives it, else `kling`: for commands that read a
 * manifest without talking to the service (review, prune, report), so its model names are
 * read as the runs read them. A name that cannot be one is left to the commands that send.
 */
export const serviceInEnv = (env: Readonly<Record<string, string | undefined>>): string => {
  const name = env["OMNIBATCH_SERVICE"]?.trim();
  return name && SERVICE_NAME.test(name) ? name : DEFAULT_SERVICE;
};

/**
 * The service's name from a flag (--service), else OMNIBATCH_SERVICE, else `kling`; a
 * problem naming where it came from when it cannot be a name.
 */
export const resolveServiceName = (
  env: Readonly<Record<string, string | undefined>>,
  flag?: string,
): { readonly name: string } | { readonly problem: string } => {
  const fromEnv = env["OMNIBATCH_SERVICE"]?.trim();
  const name = flag ?? (fromEnv ? fromEnv : DEFAULT_SERVICE);
  if (SERVICE_NAME.test(name)) return { name };
  const where = flag !== undefined ? "--service" : "OMNIBATCH_SERVICE";
  return { problem: `${where} '${name.slice(0, 80)}' is not a service name: letters, digits, '-', '_' or '.', at most 64 (the real service is 'kling')` };
};
