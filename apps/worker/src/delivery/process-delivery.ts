import { DelayedError, type Job } from "bullmq";
import { recordWebhookAttempt, recordWebhookDelay } from "@gen/metrics";
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
  type AfterAttempt,
  type AttemptDecision,
  type AttemptResult,
  type ClaimedAttempt,
  type OpenAttempt,
} from "@gen/webhook-delivery";
import type { DeliveryDeps } from "./delivery-deps.ts";
import { takeCapPlace } from "./delivery-cap.ts";
import { renderWithin } from "./render-body.ts";

// Clocks of the worker that scheduled a retry and of the one running it may differ a little; only
// a job clearly ahead of its due time (an operator's manual enqueue, say) is put back.
const EARLY_TOLERANCE_MS = 250;

type Run = Extract<AttemptDecision, { kind: "run" }>;

/** A claimed attempt: what the finish records it under, and the task the body is rendered from. */
interface Claimed {
  open: OpenAttempt;
  claim: ClaimedAttempt;
}

/**
 * Runs delivery attempt `job.data.attempt` of a task, every attempt alike (the first, a retry, an
 * operator's): load -> delay if early -> cap place -> claim -> render and send -> finish (which
 * schedules the next attempt). The job carries ids only and BullMQ delivers at least once, so
 * everything is reloaded and every step is conditional: a duplicate job returns, a re-delivered job
 * whose attempt was claimed but never finished records `attempt_lost` instead of sending twice, and
 * a claim too late for its window is recorded as `stale_claim` without sending. The task row is
 * only ever read. Any attempt the delivery waits for with `redelivery_requested_by` set is an
 * operator's manual one (the delivery row says so, not the job), followed by no retry. Every
 * transition is @gen/webhook-delivery's; this is the BullMQ side (delays, caps, rendering, sending).
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
  // Past the window's last start the claim records `stale_claim` without sending: no place needed.
  const place = fitsWindow(deps.now(), decision.windowEndsAt, deps.config) ? await takeCapPlace(deps, job, token, decision) : undefined;
  try {
    const claimed = await claim(deps, taskId, attempt, decision);
    if (!claimed) return;
    const result = await tracedAttempt(deps, claimed, decision);
    place?.release();
    await recordResult(deps, claimed.open, claimed.claim, result);
  } finally {
    place?.release();
  }
}

/** A later attempt's job that runs clearly before its due time goes back to wait for it. */
async function delayIfEarly(deps: DeliveryDeps, job: Job<WebhookJobData>, token: string | undefined, run: Run): Promise<void> {
  if (job.data.attempt === 1 || token === undefined) return;
  if (deps.now().getTime() >= run.dueAt.getTime() - EARLY_TOLERANCE_MS) return;
  recordWebhookDelay(deps.metrics, "early");
  await job.moveToDelayed(run.dueAt.getTime(), token);
  throw new DelayedError();
}

/** The conditional claim; null when another run of the job has it (or had it). */
async function claim(deps: DeliveryDeps, taskId: string, attempt: number, run: Run): Promise<Claimed | null> {
  const claimed = await claimAttempt(deps.db, taskId, attempt, deps.now());
  if (!claimed) return null;
  const open: OpenAttempt = {
    taskId,
    attempt,
    manual: claimed.requestedBy !== null,
    attemptId: claimed.id,
    startedAt: claimed.startedAt,
    taskFinishedAt: run.taskFinishedAt,
  };
  return { open, claim: claimed };
}

/** One span per attempt (when tracing); the POST itself carries no trace header. */
function tracedAttempt(deps: DeliveryDeps, claimed: Claimed, run: Run): Promise<AttemptResult> {
  const { open } = claimed;
  return inSpan("webhook.attempt", { "gen.task_id": open.taskId, "gen.attempt": open.attempt, "gen.manual": open.manual }, async () => {
    const result = await renderAndSend(deps, claimed, run);
    annotateSpan({ "gen.outcome": outcomeLabel(result), ...(result.status === null ? {} : { "http.response.status_code": result.status }) });
    return result;
  });
}

/** Renders and sends, unless the claim came too late for the window. */
async function renderAndSend(deps: DeliveryDeps, { open, claim }: Claimed, run: Run): Promise<AttemptResult> {
  const stale = staleClaim(open.startedAt, run.windowEndsAt, deps.config);
  if (stale) return stale;
  const rendered = await renderWithin(deps.render, claim.task, open.attemptId);
  if (!rendered.ok) return rendered.result;
  return deps.sender.send(run.url, rendered.body);
}

/** The finish transition (which schedules a retry), then the attempt's metrics and log line. */
async function recordResult(deps: DeliveryDeps, open: OpenAttempt, claim: ClaimedAttempt, result: AttemptResult): Promise<void> {
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
  logResult(deps, open, claim, result, next);
}

function logResult(deps: DeliveryDeps, open: OpenAttempt, claim: ClaimedAttempt, result: AttemptResult, next: AfterAttempt): void {
  const { requestedBy } = claim;
  // Never the URL: callers put secrets in it.
  const fields = {
    task_id: open.taskId,
    request_id: claim.requestId,
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
