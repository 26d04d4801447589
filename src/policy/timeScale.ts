// OMNIBATCH_TIME_SCALE shortens every wait of a run to match an emulator whose clock runs
// faster. It applies only where the service is an emulator: `--emulate`, or a service
// address on this machine (loopback). Against any other address it is ignored with a
// warning: a 60 s unknown-outcome window cut to 3 s sends creates again that a real,
// lagging service did carry out (each one paid). Pure.

import { isLoopbackUrl } from "../protocol/Loopback.js";

export const timeScaleVariable = "OMNIBATCH_TIME_SCALE";

export interface TimeScaleChoice {
  /** The scale to run with; undefined: the run's default (real speed, or quick for --emulate). */
  readonly scale: number | undefined;
  /** Why a value that was set is not used. */
  readonly warning?: string;
}

/** `text`: the variable's value; `service`: the in-process emulator, or the base URL the run sends to. */
export const timeScaleFor = (text: string | undefined, service: { readonly emulated: boolean; readonly url: string }): TimeScaleChoice => {
  if (text === undefined || text.trim() === "") return { scale: undefined };
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || n > 1) {
    return { scale: undefined, warning: `${timeScaleVariable}='${text}' ignored: it must be a number above 0 and at most 1 (e.g. 0.05)` };
  }
  if (service.emulated || isLoopbackUrl(service.url)) return { scale: n };
  let where = service.url;
  try {
    where = new URL(service.url).origin;
  } catch {
    // shown as given
  }
  return {
    scale: undefined,
    warning:
      `${timeScaleVariable}=${text} ignored: it is for an emulator on this machine (--emulate or a loopback base URL), ` +
      `and ${where} is not one; this run keeps the real service's waits (unset the variable to silence this)`,
  };
};
