/**
 * The webhook delivery state machine: every transition of a task's `webhook_deliveries` row and its
 * `webhook_attempts` log, and the enqueue of every attempt's job (queue names, job payloads and job
 * options stay in @gen/queues; the statements are @gen/db's). The worker keeps the BullMQ processor
 * (caps, rendering, sending) and calls these; the gateway and the console call them too.
 *
 *   pending ──claim 1──► in_progress ──finish: 2xx──────────────────────► delivered ──┐
 *                         │     ▲     ──finish: failure of 3 or manual──► failed ─────┤
 *   finish: failure of 1|2│     │claim n                                              │
 *   (schedule n+1)        ▼     │                                                     │
 *                    in_progress, waiting ◄────────── manual redelivery ──────────────┘
 *
 *   from          transition (function here)                          to
 *   -             task INSERT with webhook_url (@gen/db tasks module) pending
 *   pending       hand-off of attempt 1 (handOffWebhook)                 pending, its job queued
 *   pending       claim attempt 1 (claimAttempt)                      in_progress, attempt 1 open
 *   waiting       claim attempt n, when due (claimAttempt)            in_progress, attempt n open
 *   open          finish (finishAttempt): 2xx                         delivered
 *                 failure of scheduled attempt 1 or 2 + schedule      waiting (next_attempt_at, job)
 *                 failure of attempt 3 or of a manual attempt         failed (stays delivered if it was)
 *   open          stale (staleClaim): claimed too late, not sent      finish with `stale_claim`
 *   open          lost (recordLostAttempt): its worker died           finish with `attempt_lost`
 *   delivered,    manual redelivery (requestRedelivery)               waiting, due now, no retry after
 *   failed
 *   any           reconcile (reconcileDeliveries): enqueues what no job would run, records lost
 *
 * Nothing here creates the row: `pending` is born with its task, in the one task INSERT of
 * @gen/db's tasks module. Which job may run (decideAttempt, read by loadAttemptDecision), what a result means (afterAttempt)
 * and the schedule's windows are pure functions, unit-tested without PostgreSQL or Redis.
 */
export { decideAttempt, type AttemptDecision, type SkipReason } from "./attempt-guard.ts";
export { loadAttemptDecision } from "./load-attempt-decision.ts";
export { afterAttempt, attemptRecord, type AfterAttempt } from "./after-attempt.ts";
export { outcomeLabel, workerFailure, type AttemptResult } from "./attempt-result.ts";
export { claimAttempt, type ClaimedAttempt } from "./claim-attempt.ts";
export {
  FINAL_ATTEMPT_WINDOW_MS,
  attemptWindowEndsAt,
  fitsWindow,
  lastStartIn,
  isScheduledAttempt,
  manualAttemptWindowEndsAt,
  nextAttemptDueAt,
  type Schedule,
} from "./delivery-schedule.ts";
export { finishAttempt } from "./finish-attempt.ts";
export type { OpenAttempt } from "./open-attempt.ts";
export { recordLostAttempt } from "./record-lost-attempt.ts";
export { staleClaim } from "./stale-claim.ts";
export type { TransitionDeps } from "./transition-deps.ts";
export { requestRedelivery, type RedeliveryDeps, type RedeliveryRequest } from "./request-redelivery.ts";
export { reconcileDeliveries, type ReconcileDeliveriesDeps, type ReconcileDeliveriesOptions, type ReconcileDeliveriesResult } from "./reconcile-deliveries.ts";
export { handOffWebhook, type HandOffDeps } from "./hand-off-first-attempt.ts";
export { enqueueWebhookAttempt } from "./enqueue-webhook-attempt.ts";
export { ensureAttemptJob, hasLiveAttemptJob } from "./attempt-job.ts";
