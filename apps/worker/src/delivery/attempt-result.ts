import type { AttemptOutcome } from "@gen/webhook-sender";

/** The `last_error` values only the worker produces (the sender covers what the wire can). */
export type WorkerLastError = "render_timeout" | "render_failed" | "stale_claim" | "attempt_lost";

/** How one attempt ended: what the sender said, or why nothing (more) was sent. */
export type AttemptResult = AttemptOutcome | { ok: false; lastError: WorkerLastError; status: null; detail?: string };

export const workerFailure = (lastError: WorkerLastError, detail?: string): AttemptResult => ({
  ok: false,
  lastError,
  status: null,
  ...(detail === undefined ? {} : { detail }),
});

/** What the attempt log's `outcome` column holds: `delivered`, or the attempt's `last_error`. */
export const outcomeLabel = (result: AttemptResult): string => (result.ok ? "delivered" : result.lastError);
