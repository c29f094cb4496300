import type { ModelEntry, Route } from "@gen/catalog";
import { FailureStep, isTerminalTask, TaskStatus } from "@gen/domain";
import { findTask, markTaskStarted, recordFailureCause, recordUpstreamJob, type FailureCause, type Task } from "@gen/db";
import { Wf, WorkflowError, type WorkflowCode } from "@gen/errors";
import { TASK_ID_PATTERN, callbackToken } from "@gen/ids";
import { recordTaskFinished } from "@gen/metrics";
import {
  PolicyViolation,
  ProviderUnavailableError,
  UpstreamRejection,
  hasOutput,
  type CompletedResult,
  type PolicyStage,
  type Provider,
  type ProviderJob,
  type ProviderResult,
  type UpstreamCause,
} from "@gen/providers";
import { settleTask, type TaskOutcome } from "@gen/ledger";
import { clearUpstreamCallback, takeUpstreamCallback, wakeGenerationJob } from "@gen/queues";
import { annotateSpan, inSpan } from "@gen/tracing";
import { handOffWebhook } from "@gen/webhook-delivery";
import { claimRoute } from "./claim-route.ts";
import { completedCharge, failedCharge } from "./final-charge.ts";
import type { GenerationDeps } from "./generation-deps.ts";
import { pollDelayMs } from "./poll-schedule.ts";
import { SLOT_WAIT_SAFETY_MS, claimAnySlot, leaseGraceMs, mayWait, releaseSlot, renewSlot, someMayWait, waitForSlot } from "./route-slots.ts";
import { OutputsNotStored, storeOutputs } from "./store-outputs.ts";
import { boundedRetryAfter, quotaWaitMs, submitRetryDelayMs } from "./upstream-waits.ts";

/** The task's job upstream: the route that took it, the provider serving that route, the job's id there. */
interface UpstreamJob {
  route: Route;
  provider: Provider;
  upstreamId: string;
  /** Created with our callback address: polls are a safety net (the task's `upstream_callback`). */
  callback: boolean;
}

type Finish =
  | { kind: "completed"; result: CompletedResult; job: UpstreamJob }
  /** `cause` is what the provider said, for the operator only (the task row's failure_cause, the logs). */
  | { kind: "failed"; code: WorkflowCode; stage?: PolicyStage; cause?: FailureCause };
/** Not done yet: run the next step at `pollAt` (epoch ms); `afterParked` once the job waits for it. */
type Pending = { kind: "pending"; pollAt: number; afterParked?: () => Promise<void> };

/**
 * When a task's next step is due (epoch ms), and what to do once its job is parked until then
 * (join a waiting list, look for a callback that came during the step): only after the park can
 * a wake-up not miss the job.
 */
export interface NextStep {
  at: number;
  afterParked?: () => Promise<void>;
}

/** The task's time frame (epoch ms): when it started, and its generation cap (GENERATION_TIMEOUT_MS, 80002). */
interface Clock {
  startedAt: number;
  deadline: number;
}

/** A submit that got no usable answer from a route. */
type Unavailable = { route: Route; error: ProviderUnavailableError };

/**
 * One step of a task: the first submits it upstream, each later one polls once. Returns when the
 * next step is due (epoch ms), or undefined once the task is terminal. Between steps nothing is
 * held: the caller waits (`processGeneration`) or parks its BullMQ job as delayed
 * (`runGenerationJob`), so a worker tracks any number of running upstream jobs.
 *
 * Safe to run twice (BullMQ delivers at least once, and a job whose worker died is re-delivered):
 * it reloads the task, returns if it is terminal, resumes the upstream job recorded on the task
 * (`upstream_id` on the route `upstream_provider`/`upstream_model`) instead of submitting a
 * second one, and settles through `settleTask`, which moves the task only once. Infrastructure
 * errors (database, Redis) are thrown so that BullMQ retries the job; workflow failures end the task.
 */
export function generationStep(deps: GenerationDeps, taskId: string, first = false): Promise<NextStep | undefined> {
  return inSpan("generation.step", { "gen.task_id": String(taskId) }, () => step(deps, taskId, first));
}

async function step(given: GenerationDeps, taskId: string, first: boolean): Promise<NextStep | undefined> {
  // A job naming no possible task (a stray or forged job) ends here, not in a database error retried five times.
  if (typeof taskId !== "string" || !TASK_ID_PATTERN.test(taskId)) return undefined;
  const loaded = await loadTask(given, taskId, first).catch((error: unknown) => {
    // The task is unknown yet, so is its request: this line names what the job names.
    given.logger.warn("generation step could not read its task; BullMQ retries the job", { task_id: taskId, err: error });
    throw error;
  });
  if (!loaded || loaded.discardedAt) return undefined;
  // Every line of the step names the task and the request that submitted it.
  const deps: GenerationDeps = { ...given, logger: given.logger.child({ task_id: loaded.id, request_id: loaded.requestId }) };
  try {
    return await stepOn(deps, loaded);
  } catch (error) {
    deps.logger.warn("generation step failed; BullMQ retries the job", { err: error });
    throw error;
  }
}

async function stepOn(deps: GenerationDeps, loaded: Task): Promise<NextStep | undefined> {
  annotateSpan({ "gen.request_id": loaded.requestId, "gen.model": loaded.model, "gen.status": loaded.status });
  if (isTerminalTask(loaded.status)) {
    await cancelUpstreamOfCanceled(deps, loaded);
    // Settled elsewhere (a client's cancel) or by a run before this one: its slot is free now.
    await releaseSlot(deps, loaded.id, deps.catalog.model(loaded.model));
    return undefined;
  }
  const waiting = await waitForRoom(deps, loaded);
  if (waiting) return waiting;
  const task = await markStarted(deps, loaded);
  if (!task) {
    await releaseSlot(deps, loaded.id, deps.catalog.model(loaded.model));
    return undefined;
  }
  const model = deps.catalog.model(task.model);
  if (!model) {
    deps.logger.error("task model is not in the catalog", { task_id: task.id, model: task.model });
    await finish(deps, task, undefined, {
      kind: "failed",
      code: Wf.UpstreamSubmitFailed,
      cause: { step: FailureStep.Catalog, message: `model ${task.model} is not in the catalog` },
    });
    return undefined;
  }
  const startedAt = task.startedAt!.getTime();
  const outcome = await advance(deps, task, model, { startedAt, deadline: startedAt + deps.config.generationTimeoutMs });
  if (outcome.kind === "pending") return outcome.afterParked ? { at: outcome.pollAt, afterParked: outcome.afterParked } : { at: outcome.pollAt };
  await finish(deps, task, model, outcome);
  return undefined;
}

/**
 * The task as the step starts. A job's first run (`first`) finds its task queued, nearly always:
 * starting it is then the read too, one statement instead of two, unless a model of the catalog
 * may have to wait for a slot before it starts (waitForRoom). The start is conditional on the task
 * being queued and not discarded, and answers the task as it is otherwise, so whatever the row
 * says is handled as the read would have had it.
 */
async function loadTask(deps: GenerationDeps, taskId: string, first: boolean): Promise<Task | undefined> {
  if (first && !someMayWait(deps.catalog.models)) return markTaskStarted(deps.db, taskId);
  return findTask(deps.db, taskId);
}

/**
 * A queued task of a model whose every route is capped (`maxConcurrency`) takes its slot before it
 * starts. Finding every route full, it stays queued, its generation cap not running, and its job
 * parks until a slot frees (woken first come, first served) or SLOT_WAIT_SAFETY_MS passes.
 */
async function waitForRoom(deps: GenerationDeps, task: Task): Promise<NextStep | undefined> {
  if (task.status !== TaskStatus.Queued || !deps.upstreamSlots) return undefined;
  const model = deps.catalog.model(task.model);
  if (!model || !mayWait(model)) return undefined;
  if (await claimAnySlot(deps, task.id, model, leaseGraceMs(deps))) return undefined;
  return { at: Date.now() + SLOT_WAIT_SAFETY_MS, afterParked: () => waitForSlot(deps, task.id, model) };
}

/** Runs a task to a terminal state in this call, waiting in-process between steps (tests, tools). */
export async function processGeneration(deps: GenerationDeps, taskId: string): Promise<void> {
  for (let next = await generationStep(deps, taskId); next !== undefined; next = await generationStep(deps, taskId)) {
    await next.afterParked?.();
    const at = next.at;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
  }
}

/**
 * A client's cancel (80008, settled by the gateway) ends the task while its upstream job runs; the
 * step after it cancels that job. Best effort and idempotent: a job that already finished keeps
 * its outcome.
 */
async function cancelUpstreamOfCanceled(deps: GenerationDeps, task: Task): Promise<void> {
  if (task.errorCode !== Wf.Canceled) return;
  const model = deps.catalog.model(task.model);
  const job = model && recordedJob(deps, task, model);
  if (job) await job.provider.cancel(job.upstreamId).catch(() => {});
}

/**
 * Conditional on the task being queued and not discarded: the gateway's compensation for an
 * enqueue that timed out checks the same under the same row lock, so a task is either refunded and
 * hidden or started, never both. Null when it was discarded after it was loaded.
 */
async function markStarted(deps: GenerationDeps, task: Task): Promise<Task | null> {
  if (task.status === TaskStatus.InProgress && task.startedAt) return task;
  const current = await markTaskStarted(deps.db, task.id);
  if (!current) throw new Error(`task ${task.id} vanished`);
  return current.discardedAt ? null : current;
}

/** The step proper: poll the recorded job, or submit one and take its first answer. */
async function advance(deps: GenerationDeps, task: Task, model: ModelEntry, clock: Clock): Promise<Finish | Pending> {
  const recorded = recordedJob(deps, task, model);
  if (Date.now() >= clock.deadline) return timedOut(recorded);
  if (recorded) {
    // This poll answers every callback so far (upstream-callback-signal.ts).
    if (recorded.callback && deps.redis) await clearUpstreamCallback(deps.redis, deps.config.queuePrefix, task.id);
    return judge(deps, task, model, recorded, await pollJob(deps, task, recorded), clock, FailureStep.Poll);
  }
  const submitted = await submitToRoutes(deps, task, model);
  if (submitted.kind === "unavailable") {
    if (submitted.failures.length === 0 && mayWait(model) && deps.upstreamSlots) return waitInList(deps, task, model, clock);
    // No job was created: a slot taken for the submit is not held while the task waits to retry.
    await releaseSlot(deps, task.id, model);
  }
  if (submitted.kind !== "submitted") return submitted.kind === "unavailable" ? submitLater(deps, task, submitted.failures, clock) : submitted;
  // A synchronous API (OpenAI Images, Moderations) answered with the result itself: no poll.
  if (submitted.result) return judge(deps, task, model, submitted.job, submitted.result, clock, FailureStep.Submit);
  // The provider calls back when the job is done: no poll now, only the safety net.
  if (submitted.job.callback) return nextPoll(deps, task, model, submitted.job, undefined, clock);
  return judge(deps, task, model, submitted.job, await pollJob(deps, task, submitted.job), clock, FailureStep.Poll);
}

/**
 * The job recorded on the task, on the route it was created on. A task recorded before routes were
 * (no upstream_provider) ran on the primary; a route the catalog no longer lists is still polled
 * where the task says, with that provider's default base.
 */
function recordedJob(deps: GenerationDeps, task: Task, model: ModelEntry): UpstreamJob | undefined {
  if (task.upstreamId === null) return undefined;
  const route =
    task.upstreamProvider === null
      ? model.routes[0]!
      : (model.routes.find((r) => r.provider === task.upstreamProvider && r.upstreamModel === task.upstreamModel) ?? {
          provider: task.upstreamProvider,
          upstreamModel: task.upstreamModel ?? model.upstreamModel,
        });
  return { route, provider: deps.providers(route), upstreamId: task.upstreamId, callback: task.upstreamCallback };
}

/**
 * A started task found every capped route full (its slot was lost after it started, or it moved
 * off a route): it waits in the model's list like a queued one, its generation cap running.
 */
function waitInList(deps: GenerationDeps, task: Task, model: ModelEntry, clock: Clock): Pending {
  return { kind: "pending", pollAt: Math.min(Date.now() + SLOT_WAIT_SAFETY_MS, clock.deadline), afterParked: () => waitForSlot(deps, task.id, model) };
}

/** The address a provider calls when the task's job is done (UPSTREAM_CALLBACK_URL), with the task's token. */
function callbackUrlOf(deps: GenerationDeps, taskId: string): string | undefined {
  const callbacks = deps.config.upstreamCallback;
  return callbacks && `${callbacks.url}/upstream-callbacks/${callbackToken(callbacks.secret, taskId)}`;
}

type SubmitOutcome = { kind: "submitted"; job: UpstreamJob; result?: ProviderResult } | { kind: "unavailable"; failures: Unavailable[] } | Finish;

/**
 * Submits to the model's routes in order (the primary, then its fallbacks), moving on when one is
 * unavailable (429, 5xx, network error) or has no free slot. The first that takes the job is
 * recorded at once, so a worker taking over after a crash polls this job, never a new one. A
 * refusal (invalid input, a policy verdict) ends the task: another provider would refuse it too.
 */
async function submitToRoutes(deps: GenerationDeps, task: Task, model: ModelEntry): Promise<SubmitOutcome> {
  const failures: Unavailable[] = [];
  const callbackUrl = callbackUrlOf(deps, task.id);
  for (const route of model.routes) {
    if (!(await claimRoute(deps, task, model, route))) continue;
    const provider = deps.providers(route);
    let submitted;
    try {
      submitted = await inSpan("provider.submit", providerAttributes(route), () => provider.submit(jobFor(task, model, route, callbackUrl)));
    } catch (error) {
      if (!(error instanceof ProviderUnavailableError)) return refused(route, error, FailureStep.Submit);
      deps.logger.info("upstream unavailable at submit", { task_id: task.id, cause: unavailableCause(route, error) });
      failures.push({ route, error });
      continue;
    }
    // Only an adapter that registered the address says so: the others are polled as before.
    const callback = callbackUrl !== undefined && submitted.callback === true;
    await recordUpstreamJob(deps.db, task.id, { provider: route.provider, upstreamModel: route.upstreamModel, upstreamId: submitted.upstreamId, callback });
    return {
      kind: "submitted",
      job: { route, provider, upstreamId: submitted.upstreamId, callback },
      ...(submitted.result ? { result: submitted.result } : {}),
    };
  }
  return { kind: "unavailable", failures };
}

const providerAttributes = (route: Route) => ({ "gen.provider": route.provider, "gen.upstream_model": route.upstreamModel });

function jobFor(task: Task, model: ModelEntry, route: Route, callbackUrl: string | undefined): ProviderJob {
  const job: ProviderJob = {
    taskId: task.id,
    endpoint: task.endpoint,
    model: model.id,
    upstreamModel: route.upstreamModel,
    params: task.input as Record<string, unknown>,
    delayMs: model.simulatedDelayMs,
  };
  if (route.upstreamInputMap) job.inputMap = route.upstreamInputMap;
  if (route.upstreamInput) job.constantInput = route.upstreamInput;
  if (callbackUrl !== undefined) job.callbackUrl = callbackUrl;
  return job;
}

/**
 * No route took the job. A provider that asked us to wait (429, or Retry-After) is waited out:
 * that never fails the task before its generation cap (80002). An outage (5xx, network error) is
 * retried within UPSTREAM_SUBMIT_RETRY_MS of the task's start, then fails it 80001. Routes all
 * without a free slot: tried again shortly.
 */
function submitLater(deps: GenerationDeps, task: Task, failures: Unavailable[], clock: Clock): Finish | Pending {
  const now = Date.now();
  const last = failures.at(-1);
  if (!last) return { kind: "pending", pollAt: Math.min(now + submitRetryDelayMs(0), clock.deadline) };
  const asked = failures.map((failure) => quotaWaitMs(failure.error)).filter((wait) => wait !== undefined);
  if (asked.length > 0) {
    const pollAt = now + Math.min(...asked);
    if (pollAt >= clock.deadline) return { kind: "failed", code: Wf.PollingTimeout, cause: unavailableCause(last.route, last.error) };
    return { kind: "pending", pollAt };
  }
  const pollAt = now + submitRetryDelayMs(now - clock.startedAt);
  if (pollAt <= clock.startedAt + deps.config.upstreamSubmitRetryMs && pollAt < clock.deadline) return { kind: "pending", pollAt };
  return { kind: "failed", code: Wf.UpstreamSubmitFailed, cause: unavailableCause(last.route, last.error) };
}

/** One poll. A poll without an answer is transient (an outage fails every running task's poll): the job is polled again, after the wait the provider asked for. */
async function pollJob(deps: GenerationDeps, task: Task, job: UpstreamJob): Promise<ProviderResult | { state: "running"; retryAfterMs?: number } | Finish> {
  try {
    return await inSpan("provider.poll", providerAttributes(job.route), () => job.provider.poll(job.upstreamId));
  } catch (error) {
    if (!(error instanceof ProviderUnavailableError)) return refused(job.route, error, FailureStep.Poll);
    // Transient by design (an outage fails every running task's poll): not worth a warning each time.
    deps.logger.debug("upstream poll failed; polling again", { task_id: task.id, err: error.message, retry_after_ms: error.retryAfterMs });
    return { state: "running", ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }) };
  }
}

/** Maps the upstream's answer to the task's fate: done, failed with a workflow code, or polled again. */
async function judge(
  deps: GenerationDeps,
  task: Task,
  model: ModelEntry,
  job: UpstreamJob,
  answer: Awaited<ReturnType<typeof pollJob>>,
  clock: Clock,
  /** Where the answer came from: a synchronous API's submit, or a poll. */
  step: FailureStep,
): Promise<Finish | Pending> {
  if ("kind" in answer) return answer;
  switch (answer.state) {
    case "completed":
      if (hasOutput(task.endpoint, answer)) return { kind: "completed", result: answer, job };
      return { kind: "failed", code: Wf.NoOutput, cause: routeCause(job.route, { message: "completed without outputs" }, step) };
    case "failed":
      return {
        kind: "failed",
        code: answer.code,
        ...(answer.stage ? { stage: answer.stage } : {}),
        cause: routeCause(job.route, answer.upstream ?? { message: answer.message }, step),
      };
    default:
      return nextPoll(deps, task, model, job, "retryAfterMs" in answer ? answer.retryAfterMs : undefined, clock);
  }
}

/**
 * The next poll by the schedule (poll-schedule.ts: the task's age, the model's expectedDurationMs,
 * whether a callback is expected), or later when the provider asked for it; the last one at the
 * generation cap, whose step times the task out. The task's slot, if its route is capped, is held
 * until then. With a callback expected, a callback that came during this step wakes the job once
 * it is parked.
 */
async function nextPoll(
  deps: GenerationDeps,
  task: Task,
  model: ModelEntry,
  job: UpstreamJob,
  retryAfterMs: number | undefined,
  clock: Clock,
): Promise<Finish | Pending> {
  const now = Date.now();
  if (now >= clock.deadline) return timedOut(job);
  const scheduled = pollDelayMs({ elapsedMs: now - clock.startedAt, expectedDurationMs: model.expectedDurationMs, callback: job.callback });
  const wait = Math.max(scheduled, retryAfterMs === undefined ? 0 : boundedRetryAfter(retryAfterMs));
  const pollAt = Math.min(now + wait, clock.deadline);
  await renewSlot(deps, task.id, model, job.route, pollAt - now);
  if (!job.callback) return { kind: "pending", pollAt };
  return { kind: "pending", pollAt, afterParked: () => wakeOnCallback(deps, task.id) };
}

/** After the park: a callback that came while the step ran (its mark) makes the next poll run now. */
async function wakeOnCallback(deps: GenerationDeps, taskId: string): Promise<void> {
  if (!deps.redis || !deps.generationQueue) return;
  if (await takeUpstreamCallback(deps.redis, deps.config.queuePrefix, taskId)) await wakeGenerationJob(deps.generationQueue, taskId);
}

/** The generation cap is reached (80002): the upstream job, if any, is cancelled (best effort) before the task settles. */
async function timedOut(job: UpstreamJob | undefined): Promise<Finish> {
  if (job) await job.provider.cancel(job.upstreamId).catch(() => {});
  return {
    kind: "failed",
    code: Wf.PollingTimeout,
    cause: job
      ? routeCause(job.route, { message: "generation cap reached" }, FailureStep.Deadline)
      : { step: FailureStep.Deadline, message: "generation cap reached" },
  };
}

/** A provider's refusal as the task's failure: 80006 with its stage, or the rejection's own code (80007, 80003, 80001). */
function refused(route: Route, error: unknown, step: FailureStep): Finish {
  if (error instanceof PolicyViolation)
    return { kind: "failed", code: Wf.ContentPolicy, stage: error.stage, cause: routeCause(route, error.upstream ?? { message: error.message }, step) };
  if (error instanceof UpstreamRejection) return { kind: "failed", code: error.code, cause: routeCause(route, error.upstream, step) };
  if (error instanceof WorkflowError) return { kind: "failed", code: error.code, cause: routeCause(route, { message: error.message }, step) };
  throw error;
}

function routeCause(route: Route, upstream: UpstreamCause | undefined, step: FailureStep): FailureCause {
  const cause: FailureCause = { step, provider: route.provider, upstreamModel: route.upstreamModel };
  for (const key of ["status", "message", "requestId", "code"] as const) {
    if (upstream?.[key] !== undefined) Object.assign(cause, { [key]: upstream[key] });
  }
  return cause;
}

/** An unavailable route's cause at submit: what the provider said, or the network error and its code. */
function unavailableCause(route: Route, error: ProviderUnavailableError): FailureCause {
  if (error.upstream) return routeCause(route, error.upstream, FailureStep.Submit);
  const code = errorCode(error.cause);
  return routeCause(route, { message: error.message, ...(code === undefined ? {} : { code }) }, FailureStep.Submit);
}

async function finish(deps: GenerationDeps, task: Task, model: ModelEntry | undefined, outcome: Finish): Promise<void> {
  const settlement = await settlementOf(deps, task, model, outcome);
  if (settlement.cause) {
    deps.logger.warn("task failed", {
      task_id: task.id,
      code: settlement.outcome.status === TaskStatus.Failed ? settlement.outcome.code : undefined,
      cause: settlement.cause,
    });
    await recordFailureCause(deps.db, task.id, settlement.cause);
  }
  const settled = await inSpan("task.settle", { "gen.outcome": settlement.outcome.status }, () => settleTask(deps.db, task, settlement.outcome));
  // The task is terminal either way: its upstream slot goes to the next waiter before the hand-off runs.
  await releaseSlot(deps, task.id, model);
  if (!settled) return;
  recordTaskFinished(deps.metrics, settled);
  deps.logger.info("task finished", { task_id: task.id, status: settled.status, code: settled.errorCode, credits: settled.chargedCredits });
  // Attempt 1's job, after the commit: the delivery worker claims, renders and sends it.
  if (task.webhookUrl === null) return;
  await inSpan("webhook.hand_off", {}, () => handOffWebhook(deps, settled));
}

/** The charge and outcome of a finished step; a completed result is stored first (80005 when that fails). */
async function settlementOf(
  deps: GenerationDeps,
  task: Task,
  model: ModelEntry | undefined,
  outcome: Finish,
): Promise<{ outcome: TaskOutcome; cause?: FailureCause }> {
  if (outcome.kind === "failed") {
    const charge = failedCharge(model, task.reservedCredits, outcome.code, outcome.stage);
    return { outcome: { status: TaskStatus.Failed, code: outcome.code, charge }, ...(outcome.cause ? { cause: outcome.cause } : {}) };
  }
  // A completed result only ever comes from a catalog model's provider.
  if (!model) throw new Error(`task ${task.id} completed for a model not in the catalog`);
  try {
    const output = await inSpan("storage.store_outputs", {}, () => storeOutputs(task.id, model.endpoint, outcome.result, deps));
    const tokens = model.pricing?.method === "tokens" ? outcome.result.tokens : undefined;
    return { outcome: { status: TaskStatus.Completed, output, charge: completedCharge(model, task.reservedCredits, tokens), tokens } };
  } catch (error) {
    if (!(error instanceof WorkflowError)) throw error;
    deps.logger.warn("storing outputs failed", { task_id: task.id, err: error.cause ?? error });
    const reason = error.cause instanceof Error ? error.cause.message : error.message;
    const code = errorCode(error.cause);
    const step = error instanceof OutputsNotStored ? error.step : FailureStep.Store;
    return {
      outcome: { status: TaskStatus.Failed, code: error.code, charge: 0 },
      cause: routeCause(outcome.job.route, { message: `storing outputs failed: ${causeText(reason)}`, ...(code === undefined ? {} : { code }) }, step),
    };
  }
}

/**
 * The code of a network, file-system or storage-service error (ECONNREFUSED, ENOSPC,
 * AccessDenied): Node's `code`, else an AWS SDK error's `name` (a plain Error's says nothing).
 */
function errorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (typeof code === "string") return code;
  return typeof name === "string" && name !== "Error" && name !== "TypeError" ? name : undefined;
}

/** Error text kept to the cause's size (500 characters, as the providers' texts are). */
function causeText(text: string): string {
  return text.length > 500 ? text.slice(0, 500) : text;
}
