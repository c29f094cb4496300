import { attemptWindowEndsAt } from "./delivery-schedule.ts";
import { routeToLane, type GateDeps } from "./host-gate.ts";

/** Hands attempt 1 of a task that just became terminal to the delivery queues. */
export type HandOffFirstAttempt = (taskId: string, url: string, finishedAt: Date) => Promise<void>;

/**
 * Routes attempt 1 by its receiver's tickets before it is queued: a host at its cap gets the
 * attempt parked, one that keeps timing out gets it in the slow lane, so one customer's 1,000
 * finishing tasks to a dead endpoint never sit in the main queue in front of everyone else's.
 */
export function firstAttemptHandOff(deps: GateDeps): HandOffFirstAttempt {
  return (taskId, url, finishedAt) => routeToLane(deps, "main", taskId, 1, url, attemptWindowEndsAt(1, finishedAt, finishedAt, deps.config));
}
