import { WorkerError } from "@gen/domain";
import { workerFailure, type AttemptResult } from "./attempt-result.ts";
import { fitsWindow, type Schedule } from "./delivery-schedule.ts";

/**
 * The stale claim (pure): an attempt claimed too late to finish inside its window is not sent; its
 * result is `stale_claim`, recorded like any other. Null when the claim still fits.
 */
export function staleClaim(startedAt: Date, windowEndsAt: Date, schedule: Schedule): AttemptResult | null {
  if (fitsWindow(startedAt, windowEndsAt, schedule)) return null;
  return workerFailure(WorkerError.StaleClaim, `claimed at ${startedAt.toISOString()}, window ends ${windowEndsAt.toISOString()}`);
}
