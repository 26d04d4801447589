// Whether a failed attempt is followed by another on its own (`retry_failed`,
// `retry_content_risk`): the one rule the plan (diffPlan.ts, and so the start's totals)
// and the engine (taskRules.ts) both ask, so a run does what its start line said. Pure.

import { isContentRisk } from "../protocol/TaskView.js";

export interface RetrySettings {
  /** Extra attempts after a failure (`retry_failed`). */
  readonly retryFailed: number;
  /** Content-risk failures are tried again too (`retry_content_risk`). */
  readonly retryContentRisk: boolean;
}

/**
 * May the failed attempt be followed by another? `retriesUsed`: attempts made after the
 * first (attempts abandoned at another service not counted); `error`: the service's reason.
 * A content-risk failure is not tried again unless the job asks: the same content sent
 * again pays again for the same refusal.
 */
export const mayRetry = (settings: RetrySettings, retriesUsed: number, error: { readonly code?: number | undefined; readonly message: string } | undefined): boolean =>
  retriesUsed < settings.retryFailed && (settings.retryContentRisk || !isContentRisk(error?.code, error?.message ?? ""));
