// Where a task's results really go, for the run and for `plan` alike (one rule, so plan
// never shows a folder the run will not use). A task's default folder comes from its
// matrix values; a changed task (`~` in plan) has a new id but the same values, so the
// same default folder as the task it replaces, whose paid, downloaded files stay there:
// it gets a folder of its own, suffixed with the end of its id. A task the lockfile
// already records keeps the folder it was given. Pure.

/**
 * What the rule reads of a lockfile record (state/LockFile.ts `LockTask` has these): its
 * folder and its outputs' paths. Named here, so the manifest does not reach up to the
 * lockfile's layer (src/README.md).
 */
export interface RecordedFolder {
  readonly dir: string;
  readonly outputs: readonly { readonly path?: string | undefined }[];
}

/** Folder -> the task whose recorded files are there. */
export type FolderHolders = ReadonlyMap<string, string>;

export const folderHolders = (lock: Iterable<readonly [string, RecordedFolder]>): Map<string, string> => {
  const holder = new Map<string, string>();
  for (const [id, t] of lock) if (t.outputs.some((o) => o.path !== undefined)) holder.set(t.dir, id);
  return holder;
};

/** The folder `task` (its id and default folder) writes to, given its own record's folder, if any. */
export const resultFolder = (task: { readonly id: string; readonly dir: string }, recordedDir: string | undefined, holders: FolderHolders): string => {
  if (recordedDir !== undefined) return recordedDir;
  const taken = holders.get(task.dir);
  return taken !== undefined && taken !== task.id ? `${task.dir}-${task.id.slice(-6)}` : task.dir;
};

/** The default folder of a task placed by `resultFolder` (the suffix of its own taken off), for matching by position. */
export const defaultFolderOf = (dir: string, id: string): string => {
  const suffix = `-${id.slice(-6)}`;
  return dir.endsWith(suffix) ? dir.slice(0, -suffix.length) : dir;
};
