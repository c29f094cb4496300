import { DeliveryStatus, type LastError, type WorkerLastError } from "@gen/domain";
import type { AttemptOutcome } from "@gen/webhook-sender";

/** How one attempt ended: what the sender said, or why nothing (more) was sent. */
export type AttemptResult = AttemptOutcome | { ok: false; lastError: WorkerLastError; status: null; detail?: string };

export const workerFailure = (lastError: WorkerLastError, detail?: string): AttemptResult => ({
  ok: false,
  lastError,
  status: null,
  ...(detail === undefined ? {} : { detail }),
});

/** What the attempt log's `outcome` column holds: `delivered`, or the attempt's `last_error`. */
export const outcomeLabel = (result: AttemptResult): LastError | typeof DeliveryStatus.Delivered => (result.ok ? DeliveryStatus.Delivered : result.lastError);
