// API requests by kind, from the emulator's per-endpoint counters: creates, queries of
// known tasks (A2, B2), listings (A3 cursor, B3 pages) and result downloads.

import type { EmulatorStats } from "../../src/emulator/Emulator.js";

export interface RequestCounts {
  readonly create: number;
  readonly query: number;
  readonly list: number;
  readonly download: number;
  /** Everything but downloads. */
  readonly api: number;
  readonly total: number;
}

export const requestCounts = (stats: EmulatorStats): RequestCounts => {
  const r = (name: string) => stats.requests[name] ?? 0;
  const create = r("video.create") + r("image.create");
  const query = r("video.query") + r("image.get");
  const list = r("video.cursor") + r("image.list");
  const download = r("download");
  return { create, query, list, download, api: create + query + list, total: create + query + list + download };
};

export const perTask = (c: RequestCounts, tasks: number) => ({
  create: c.create / tasks,
  query: c.query / tasks,
  list: c.list / tasks,
  download: c.download / tasks,
  api: c.api / tasks,
});
