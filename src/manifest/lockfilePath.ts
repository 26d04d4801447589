// Where a manifest's lockfile is: beside it, `M.yaml` -> `M.lock.json`.

export const lockfilePathFor = (manifest: string): string => manifest.replace(/\.ya?ml$/i, "") + ".lock.json";
