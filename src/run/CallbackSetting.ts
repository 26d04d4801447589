// When a run listens for callbacks and where: on by itself when the service is on this
// machine (an emulator), since it can reach a loopback listener; for a real service only
// when given a public address that forwards to the listener. Off on request.

import { isLoopbackHost } from "../protocol/Loopback.js";
import { CallbackListener } from "../callbacks/CallbackListener.js";

export interface CallbackSetting {
  /** The public address the service calls (forwarding to host:port); the token is appended. */
  readonly url?: string;
  /** Where to listen. Default 127.0.0.1, any free port. */
  readonly host?: string;
  readonly port?: number;
}

/** The environment variable holding the `whsec_...` secret callbacks are signed with. */
export const webhookSecretVariable = "OMNIBATCH_WEBHOOK_SECRET";

/** undefined (auto): on for a loopback service; false: off; true or a setting: on. Pure. */
export const callbacksWanted = (setting: boolean | CallbackSetting | undefined, serviceUrl: string): CallbackSetting | undefined => {
  if (setting === false) return undefined;
  if (setting === true || (typeof setting === "object" && setting !== null)) return setting === true ? {} : setting;
  let host: string;
  try {
    host = new URL(serviceUrl).hostname;
  } catch {
    return undefined;
  }
  return isLoopbackHost(host) ? {} : undefined;
};

/** The signing secret from the environment, when it looks like one. */
export const webhookSecret = (env: Readonly<Record<string, string | undefined>>): string | undefined => {
  const s = env[webhookSecretVariable]?.trim();
  return s && s.length > 0 ? s : undefined;
};

/** Starts the listener a setting asks for. */
export const startCallbackListener = (setting: CallbackSetting, secret: string | undefined): Promise<CallbackListener> =>
  CallbackListener.start({
    ...(setting.host !== undefined ? { host: setting.host } : {}),
    ...(setting.port !== undefined ? { port: setting.port } : {}),
    ...(setting.url !== undefined ? { publicUrl: setting.url } : {}),
    ...(secret !== undefined ? { secret } : {}),
  });
