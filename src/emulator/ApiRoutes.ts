// Which operation a request names: the service's paths and methods (the video create
// path carries the service's name), and B2's task id from its path. Pure but for a
// cache of the route table per service name.

import type { EndpointName } from "./EmulatorConfig.js";

const apiRoutes = (service: string) =>
  ({
    [`/omni-video/${service}-o1`]: { POST: "video.create" },
    "/tasks": { GET: "video.query", POST: "video.cursor" },
    "/v1/images/omni-image": { POST: "image.create", GET: "image.list" },
  }) as Record<string, Partial<Record<string, EndpointName>>>;

const imageTaskPrefix = "/v1/images/omni-image/";

export interface ApiRoute {
  /** The operation, when the path and method name one. */
  readonly endpoint: EndpointName | undefined;
  /** B2's task id (or external id), decoded. */
  readonly imageId: string | undefined;
  /** The methods the path takes: a known path with another method is answered 1202 naming them. */
  readonly allowed: readonly string[];
  /** The path as routed (a trailing slash dropped). */
  readonly path: string;
}

export class ApiRouter {
  private cache: { service: string; routes: ReturnType<typeof apiRoutes> } | undefined;

  route(service: string, rawPath: string, method: string): ApiRoute {
    const path = rawPath.length > 1 && rawPath.endsWith("/") ? rawPath.slice(0, -1) : rawPath;
    if (this.cache?.service !== service) this.cache = { service, routes: apiRoutes(service) };
    const routes = this.cache.routes[path];
    if (routes) return { endpoint: routes[method], imageId: undefined, allowed: Object.keys(routes), path };
    if (path.startsWith(imageTaskPrefix) && path.length > imageTaskPrefix.length && !path.slice(imageTaskPrefix.length).includes("/")) {
      if (method !== "GET") return { endpoint: undefined, imageId: undefined, allowed: ["GET"], path };
      const raw = path.slice(imageTaskPrefix.length);
      let imageId: string;
      try {
        imageId = decodeURIComponent(raw);
      } catch {
        imageId = raw;
      }
      return { endpoint: "image.get", imageId, allowed: ["GET"], path };
    }
    return { endpoint: undefined, imageId: undefined, allowed: [], path };
  }
}
