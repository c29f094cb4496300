import { DelayedError, type Job } from "bullmq";
import { WorkerError } from "@gen/domain";
import { recordWebhookAttempt } from "@gen/metrics";
import type { WebhookJobData } from "@gen/queues";
import { annotateSpan, inSpan } from "@gen/tracing";
import {
  claimAttempt,
  finishAttempt,
  fitsWindow,
  loadAttemptDecision,
  outcomeLabel,
  recordLostAttempt,
  staleClaim,
  workerFailure,
  type AfterAttempt,
  type AttemptDecision,
  type AttemptResult,
  type ClaimedAttempt,
  type OpenAttempt,
} from "@gen/webhook-delivery";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { enterHostGate, forgetTicket, type HeldSlot } from "./host-gate.ts";
import { renderWithin } from "./render-body.ts";

// Clocks of the worker that scheduled a retry and of the one running it may differ a little; only
// a job clearly ahead of its due time (an operator's manual enqueue, say) is put back.
const EARLY_TOLERANCE_MS = 250;

export type Run = Extract<AttemptDecision, { kind: "run" }>;

/**
 * Runs delivery attempt `job.data.attempt` of a task. The job carries ids only and BullMQ delivers
 * at least once, so everything is reloaded and every step is conditional: a duplicate job returns,
 * a re-delivered job whose attempt was claimed but never finished records `attempt_lost` instead of
 * sending twice, and a claim too late for its window is recorded as `stale_claim` without sending.
 * The task row is only ever read. Attempts 1-3 follow the schedule; any attempt the delivery waits
 * for with `redelivery_requested_by` set is an operator's manual one (the delivery row says so, not
 * the job), which runs the same way but is followed by no retry. Every transition is
 * @gen/webhook-delivery's; this is the BullMQ side (delays, host tickets, rendering, sending).
 */
export async function processDelivery(deps: DeliveryDeps, job: Job<WebhookJobData>, token?: string): Promise<void> {
  const { taskId, attempt } = job.data;
  const decision = await loadAttemptDecision(deps.db, taskId, attempt, deps.config);
  if (decision.kind === "skip") return;
  if (decision.kind === "lost") {
    await recordLostAttempt(deps, decision.open, "redelivered job");
    return;
  }
  await delayIfEarly(deps, job, token, decision);
  const slot = await takeHostTicket(deps, job, token, decision);
  if (slot === "moved") return;

  const claim = await claimAttempt(deps.db, taskId, attempt, deps.now());
  if (!claim) {
    slot?.release(workerFailure(WorkerError.StaleClaim));
    return;
  }
  const open: OpenAttempt = {
    taskId,
    attempt,
    manual: claim.requestedBy !== null,
    attemptId: claim.id,
    startedAt: claim.startedAt,
    taskFinishedAt: decision.taskFinishedAt,
  };
  const result = await runAttempt(deps, open, claim, decision, slot);
  await recordResult(deps, open, claim, result);
}

/** A later attempt's job that runs clearly before its due time goes back to wait for it. */
async function delayIfEarly(deps: DeliveryDeps, job: Job<WebhookJobData>, token: string | undefined, run: Run): Promise<void> {
  if (job.data.attempt === 1 || token === undefined) return;
  if (deps.now().getTime() >= run.dueAt.getTime() - EARLY_TOLERANCE_MS) return;
  await job.moveToDelayed(run.dueAt.getTime(), token);
  throw new DelayedError();
}

/**
 * The host's ticket is asked for only while the attempt can still fit its window; past that, the
 * claim records `stale_claim` without sending and needs none (a parked attempt's ticket and waiting
 * place are given up, so the host's next waiter need not wait for a lease to run out).
 */
async function takeHostTicket(deps: DeliveryDeps, job: Job<WebhookJobData>, token: string | undefined, run: Run): Promise<HeldSlot | "moved" | undefined> {
  if (fitsWindow(deps.now(), run.windowEndsAt, deps.config)) return enterHostGate(deps, job, token, run.url, run.customer, deps.lane, run.windowEndsAt);
  if (job.id !== undefined) await forgetTicket(deps, run.url, run.customer, job.id);
  return undefined;
}

/**
 * Renders and sends, unless the claim came too late for the window; the ticket goes back either way.
 * One span per attempt, queued or inline; the POST itself carries no trace header.
 */
export function runAttempt(deps: DeliveryDeps, open: OpenAttempt, claim: ClaimedAttempt, run: Run, slot: HeldSlot | undefined): Promise<AttemptResult> {
  return inSpan("webhook.attempt", { "gen.task_id": open.taskId, "gen.attempt": open.attempt, "gen.manual": open.manual }, async () => {
    const result = await attempt(deps, open, claim, run, slot);
    annotateSpan({ "gen.outcome": outcomeLabel(result), ...(result.status === null ? {} : { "http.response.status_code": result.status }) });
    return result;
  });
}

async function attempt(deps: DeliveryDeps, open: OpenAttempt, claim: ClaimedAttempt, run: Run, slot: HeldSlot | undefined): Promise<AttemptResult> {
  let result: AttemptResult;
  try {
    result = await renderAndSend(deps, open, claim, run);
  } catch (error) {
    slot?.release(workerFailure(WorkerError.RenderFailed));
    throw error;
  }
  slot?.release(result);
  return result;
}

async function renderAndSend(deps: DeliveryDeps, open: OpenAttempt, claim: ClaimedAttempt, run: Run): Promise<AttemptResult> {
  const stale = staleClaim(open.startedAt, run.windowEndsAt, deps.config);
  if (stale) return stale;
  const rendered = await renderWithin(deps.render, claim.task, open.attemptId);
  if (!rendered.ok) return rendered.result;
  return deps.sender.send(run.url, rendered.body);
}

/** The finish transition (which schedules a retry), then the attempt's metrics and log line. */
export async function recordResult(deps: DeliveryDeps, open: OpenAttempt, claim: ClaimedAttempt, result: AttemptResult): Promise<void> {
  const finishedAt = deps.now();
  const next = await finishAttempt(deps, open, result, finishedAt);
  if (next === null) {
    deps.logger.warn("webhook attempt finished after it was recorded as lost; result dropped", {
      task_id: open.taskId,
      attempt: open.attempt,
      delivery_id: claim.id,
      outcome: outcomeLabel(result),
    });
    return;
  }
  // Dispatch time counts only scheduled attempts the receiver answered (any status): it measures
  // lag behind task completion, which an operator's redelivery hours later would distort.
  const dispatchSeconds = result.status === null || open.manual ? undefined : (finishedAt.getTime() - open.taskFinishedAt.getTime()) / 1000;
  recordWebhookAttempt(deps.metrics, outcomeLabel(result), dispatchSeconds);
  logResult(deps, open, claim.requestedBy, result, next);
}

function logResult(deps: DeliveryDeps, open: OpenAttempt, requestedBy: string | null, result: AttemptResult, next: AfterAttempt): void {
  // Never the URL: callers put secrets in it.
  const fields = {
    task_id: open.taskId,
    attempt: open.attempt,
    delivery_id: open.attemptId,
    outcome: outcomeLabel(result),
    response_status: result.status,
    next: next.kind,
    ...(requestedBy === null ? {} : { requested_by: requestedBy }),
  };
  if (!result.ok) deps.logger.info("webhook attempt failed", { ...fields, detail: result.detail });
  // An operator's redelivery is rare and worth seeing at the default level; scheduled successes are not.
  else if (requestedBy !== null) deps.logger.info("webhook delivered", fields);
  else deps.logger.debug("webhook delivered", fields);
}
