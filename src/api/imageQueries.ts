// B2 (one image task by id or external id) and B3 (a page of the image list, newest
// first), each strict (the whole answer must be readable) or checked (unreadable tasks
// come as anomalies beside the good ones).

import { Effect } from "effect";
import type { ApiTransport } from "./ApiTransport.js";
import type { CheckedTasks, ImagePage } from "./clientTypes.js";
import { fillImageTask } from "./fillDefaults.js";
import { paths, type ImageTask } from "../protocol/wire.js";

const listPath = (p: ImagePage) => `${paths.imageList}?pageNum=${p.pageNum}&pageSize=${p.pageSize}`;

export const imageQueries = (t: ApiTransport) => ({
  getImage: (idOrExternalId: string) =>
    t.idempotent(Effect.map(t.call("getImage", "GET", paths.imageTask(idOrExternalId)), (data) => fillImageTask(data as ImageTask))),

  getImageChecked: (idOrExternalId: string) =>
    t.idempotent(
      Effect.map(
        t.callTasks("getImage", "GET", paths.imageTask(idOrExternalId)),
        (c): CheckedTasks<ImageTask> => ({ tasks: (c.tasks as ImageTask[]).map(fillImageTask), anomalies: c.anomalies }),
      ),
    ),

  listImages: (p: ImagePage) =>
    t.idempotent(Effect.map(t.call("listImages", "GET", listPath(p)), (data) => (data as ImageTask[]).map(fillImageTask))),

  listImagesChecked: (p: ImagePage) =>
    t.idempotent(
      Effect.map(
        t.callTasks("listImages", "GET", listPath(p)),
        (c): CheckedTasks<ImageTask> => ({ tasks: (c.tasks as ImageTask[]).map(fillImageTask), anomalies: c.anomalies }),
      ),
    ),
});

export type ImageQueries = ReturnType<typeof imageQueries>;
