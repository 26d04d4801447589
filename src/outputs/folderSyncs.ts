// Folder fsyncs shared by every change they cover. A download makes its task's folder
// (a new entry in the parent folder) and renames its file into it (a new entry in the task
// folder); both must be durable before the file is recorded. An fsync of a folder makes
// durable every change made in it before the fsync started, so a change stamped before an
// fsync of its folder started waits for that fsync instead of starting its own: many tasks
// finishing at once make their folders in the same parent, and one fsync serves them all.
// Each fsync handed to the thread pool also stalls the event loop while an idle pool thread
// is woken (0.3 to 1 ms each on a loaded 2-core machine, docs/benchmarks.md), so fewer of
// them is time for everything else.

/** Shares folder fsyncs between the changes each one covers. */
export interface FolderSyncs {
  /** Call right after a change (mkdir, rename) has returned: the stamp to pass to `sync`. */
  readonly stamp: () => number;
  /** Resolves once an fsync of `dir` that started after the change stamped `changedAt` has ended (rejects with its error). */
  readonly sync: (dir: string, changedAt: number) => Promise<void>;
  /** fsyncs started so far (a figure for tests and benchmarks). */
  readonly started: () => number;
}

interface Pending {
  /** The last stamp given out when this fsync started (every change up to it is covered); undefined until it starts. */
  coversUpTo: number | undefined;
  done: Promise<void>;
}

/** Folders whose last ended fsync is remembered (a run touches thousands: the oldest are forgotten). */
const REMEMBERED = 256;

interface Folder {
  /** Every change stamped up to this is durable (an fsync that started after it ended well). */
  durableUpTo: number;
  running: Pending | undefined;
  queued: Pending | undefined;
}

/** `fsyncDir` makes one folder's entries durable (src/fs/durable.ts). */
export const makeFolderSyncs = (fsyncDir: (dir: string) => Promise<void>): FolderSyncs => {
  let stamps = 0;
  let startedCount = 0;
  const folders = new Map<string, Folder>();

  const forgetOld = () => {
    if (folders.size <= REMEMBERED) return;
    for (const [dir, f] of folders) {
      if (folders.size <= REMEMBERED) break;
      if (f.running === undefined && f.queued === undefined) folders.delete(dir);
    }
  };

  const sync = (dir: string, changedAt: number): Promise<void> => {
    let folder = folders.get(dir);
    if (folder === undefined) {
      folders.set(dir, (folder = { durableUpTo: 0, running: undefined, queued: undefined }));
      forgetOld();
    }
    // Already made durable by an fsync that started after the change.
    if (folder.durableUpTo >= changedAt) return Promise.resolve();
    const running = folder.running;
    if (running !== undefined && running.coversUpTo !== undefined && running.coversUpTo >= changedAt) return running.done;
    // One waiting to start covers every change made before it starts: this one too.
    if (folder.queued !== undefined) return folder.queued.done;
    const entry: Pending = { coversUpTo: undefined, done: Promise.resolve() };
    const f = folder;
    entry.done = (running?.done ?? Promise.resolve())
      // The one before failing says nothing about this one: it starts anyway.
      .catch(() => undefined)
      .then(() => {
        f.queued = undefined;
        f.running = entry;
        const covers = stamps;
        entry.coversUpTo = covers;
        startedCount++;
        return fsyncDir(dir).then(() => {
          if (covers > f.durableUpTo) f.durableUpTo = covers;
        });
      })
      .finally(() => {
        if (f.running === entry) f.running = undefined;
      });
    folder.queued = entry;
    return entry.done;
  };

  return { stamp: () => ++stamps, sync, started: () => startedCount };
};
