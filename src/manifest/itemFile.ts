// What `{{ item.file }}` names in a downstream (for_each) job: the upstream result's file
// in the outputs folder, read and sent as base64. With the outputs in an object store
// there is no such file on this machine: the result's link at the service stands in (the
// engine refreshes it before a create, and holds the task once the service deleted the
// result, as for `{{ item.url }}`). A task's id hashes the input's content (its sha256),
// never a path or a link, so the same manifest makes the same tasks with a folder or a
// store. Pure.

import { join } from "node:path";
import { isStoreUrl } from "../fs/StoreUrl.js";

/** `item.file` for a result at `rel` (relative, `/`-separated) under `outputs` (a folder or an `s3://` URL), whose link is `url`. */
export const itemFile = (outputs: string, rel: string, url: string): string => (isStoreUrl(outputs) ? url : join(outputs, ...rel.split("/")));
