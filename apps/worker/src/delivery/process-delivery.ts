import { DelayedError, type Job } from "bullmq";
import { recordWebhookAttempt } from "@gen/metrics";
import type { WebhookJobData } from "@gen/queues";
import { outcomeLabel, workerFailure, type AttemptResult } from "./attempt-result.ts";
import { claimAttempt } from "./claim-attempt.ts";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { attemptWindowEndsAt, fitsWindow, manualAttemptWindowEndsAt, type AttemptNo } from "./delivery-schedule.ts";
import { loadDeliveryState } from "./delivery-state.ts";
import { finishAttempt, type OpenAttempt } from "./finish-attempt.ts";
import { enterHostGate, forgetTicket, type HeldSlot } from "./host-gate.ts";
import { recordLostAttempt } from "./record-lost-attempt.ts";
import { renderWithin } from "./render-body.ts";
import { scheduleNextAttempt } from "./schedule-next-attempt.ts";

const TERMINAL = new Set(["completed", "failed"]);
// Clocks of the worker that scheduled a retry and of the one running it may differ a little; only
// a job clearly ahead of its due time (an operator's manual enqueue, say) is put back.
const EARLY_TOLERANCE_MS = 250;

/**
 * Runs delivery attempt `job.data.attempt` of a task. The job carries ids only and BullMQ delivers
 * at least once, so everything is reloaded and every step is conditional: a duplicate job returns,
 * a re-delivered job whose attempt was claimed but never finished records `attempt_lost` instead of
 * sending twice, and a claim too late for its window is recorded as `stale_claim` without sending.
 * The task row is only ever read. Attempts 1-3 follow the schedule; any attempt the delivery waits
 * for with `redelivery_requested_by` set is an operator's manual one (the delivery row says so, not
 * the job), which runs the same way but is followed by no retry.
 */
export async function processDelivery(deps: DeliveryDeps, job: Job<WebhookJobData>, token?: string): Promise<void> {
  const { taskId, attempt } = job.data;
  if (!Number.isInteger(attempt) || attempt < 1) return;
  const state = await loadDeliveryState(deps.db, taskId, attempt);
  if (!state || state.status === "delivered" || state.status === "failed") return;
  if (!TERMINAL.has(state.taskStatus) || state.taskFinishedAt === null) return;
  const taskFinishedAt = state.taskFinishedAt;

  if (state.attemptId !== null && state.attemptStartedAt !== null) {
    if (state.attemptFinishedAt !== null) return;
    const open = { taskId, attempt, manual: state.attemptRequestedBy !== null, attemptId: state.attemptId, startedAt: state.attemptStartedAt, taskFinishedAt };
    await recordLostAttempt(deps, open, "redelivered job");
    return;
  }

  // Only the attempt the delivery waits for may run; anything else is a stray job.
  const manual = state.redeliveryRequestedBy !== null;
  if (state.attempts !== attempt - 1 || (attempt > 3 && !manual)) return;
  if (attempt === 1 ? state.status !== "pending" : state.status !== "in_progress" || state.nextAttemptAt === null) return;
  const dueAt = attempt === 1 ? taskFinishedAt : state.nextAttemptAt!;

  const now = deps.now();
  if (attempt > 1 && token !== undefined && now.getTime() < dueAt.getTime() - EARLY_TOLERANCE_MS) {
    await job.moveToDelayed(dueAt.getTime(), token);
    throw new DelayedError();
  }

  // The host's ticket is asked for only while the attempt can still fit its window; past that, the
  // claim below records `stale_claim` without sending and needs none (a parked attempt's ticket and
  // waiting place are given up, so the host's next waiter need not wait for a lease to run out).
  const windowEndsAt = manual ? manualAttemptWindowEndsAt(dueAt) : attemptWindowEndsAt(attempt as AttemptNo, dueAt, taskFinishedAt, deps.config);
  let slot: HeldSlot | undefined;
  if (fitsWindow(now, windowEndsAt, deps.config)) {
    const gate = await enterHostGate(deps, job, token, state.url, deps.lane, windowEndsAt);
    if (gate === "moved") return;
    slot = gate;
  } else if (job.id !== undefined) {
    await forgetTicket(deps, state.url, job.id);
  }

  const claim = await claimAttempt(deps.db, taskId, attempt, deps.now());
  if (!claim) {
    slot?.release(workerFailure("stale_claim"));
    return;
  }
  const open: OpenAttempt = { taskId, attempt, manual: claim.requestedBy !== null, attemptId: claim.id, startedAt: claim.startedAt, taskFinishedAt };
  let result: AttemptResult;
  try {
    result = await runAttempt(deps, open, state.url, windowEndsAt);
  } catch (error) {
    slot?.release(workerFailure("render_failed"));
    throw error;
  }
  slot?.release(result);
  const finishedAt = deps.now();
  const next = await finishAttempt(deps.db, open, result, finishedAt, deps.config);
  if (next === null) {
    deps.logger.warn("webhook attempt finished after it was recorded as lost; result dropped", { task_id: taskId, attempt, delivery_id: claim.id, outcome: outcomeLabel(result) });
    return;
  }
  // Dispatch time counts only scheduled attempts the receiver answered (any status): it measures
  // lag behind task completion, which an operator's redelivery hours later would distort.
  const dispatchSeconds = result.status === null || open.manual ? undefined : (finishedAt.getTime() - taskFinishedAt.getTime()) / 1000;
  recordWebhookAttempt(deps.metrics, outcomeLabel(result), dispatchSeconds);
  logResult(deps, open, claim.requestedBy, result, next.kind);
  await scheduleNextAttempt(deps, taskId, next);
}

async function runAttempt(deps: DeliveryDeps, open: OpenAttempt, url: string, windowEndsAt: Date): Promise<AttemptResult> {
  if (!fitsWindow(open.startedAt, windowEndsAt, deps.config)) {
    return workerFailure("stale_claim", `claimed at ${open.startedAt.toISOString()}, window ends ${windowEndsAt.toISOString()}`);
  }
  const rendered = await renderWithin(deps.render, open.taskId, open.attemptId);
  if (!rendered.ok) return rendered.result;
  return deps.sender.send(url, rendered.body);
}

function logResult(deps: DeliveryDeps, open: OpenAttempt, requestedBy: string | null, result: AttemptResult, next: string): void {
  // Never the URL: callers put secrets in it.
  const fields = {
    task_id: open.taskId,
    attempt: open.attempt,
    delivery_id: open.attemptId,
    outcome: outcomeLabel(result),
    response_status: result.status,
    next,
    ...(requestedBy === null ? {} : { requested_by: requestedBy }),
  };
  if (!result.ok) deps.logger.info("webhook attempt failed", { ...fields, detail: result.detail });
  // An operator's redelivery is rare and worth seeing at the default level; scheduled successes are not.
  else if (requestedBy !== null) deps.logger.info("webhook delivered", fields);
  else deps.logger.debug("webhook delivered", fields);
}
