import type { ModelEntry } from "@gen/catalog";
import { isTerminalTask, TaskStatus } from "@gen/domain";
import { findTask, markTaskStarted, recordUpstreamId, type Task } from "@gen/db";
import { Wf, WorkflowError, type WorkflowCode } from "@gen/errors";
import { TASK_ID_PATTERN } from "@gen/ids";
import { recordTaskFinished } from "@gen/metrics";
import { PolicyViolation, ProviderUnavailableError, hasOutput, type CompletedResult, type PolicyStage, type Provider, type ProviderJob } from "@gen/providers";
import { settleTask, type TaskOutcome } from "@gen/ledger";
import { prepareHandOff } from "@gen/webhook-delivery";
import { completedCharge, failedCharge } from "./final-charge.ts";
import type { GenerationDeps } from "./generation-deps.ts";
import { pollDelayMs } from "./poll-schedule.ts";
import { storeOutputs } from "./store-outputs.ts";

type Finish = { kind: "completed"; result: CompletedResult } | { kind: "failed"; code: WorkflowCode; stage?: PolicyStage };
/** The upstream job is still running: poll it again at `pollAt` (epoch ms). */
type Pending = { kind: "pending"; pollAt: number };

/**
 * One step of a task: the first submits it upstream, each later one polls once. Returns when the
 * next step is due (epoch ms), or undefined once the task is terminal. Between steps nothing is
 * held: the caller waits (`processGeneration`) or parks its BullMQ job as delayed
 * (`runGenerationJob`), so a worker tracks any number of running upstream jobs.
 *
 * Safe to run twice (BullMQ delivers at least once, and a job whose worker died is re-delivered):
 * it reloads the task, returns if it is terminal, resumes the upstream job recorded in
 * `upstream_id` instead of submitting a second one, and settles through `settleTask`, which moves
 * the task only once. Infrastructure errors (database, Redis) are thrown so that BullMQ retries the
 * job; workflow failures end the task.
 */
export async function generationStep(deps: GenerationDeps, taskId: string): Promise<number | undefined> {
  // A job naming no possible task (a stray or forged job) ends here, not in a database error retried five times.
  if (typeof taskId !== "string" || !TASK_ID_PATTERN.test(taskId)) return undefined;
  const loaded = await findTask(deps.db, taskId);
  if (!loaded || loaded.discardedAt) return undefined;
  if (isTerminalTask(loaded.status)) {
    await cancelUpstreamOfCanceled(deps, loaded);
    return undefined;
  }
  const task = await markStarted(deps, loaded);
  if (!task) return undefined;
  const model = deps.catalog.model(task.model);
  if (!model) {
    deps.logger.error("task model is not in the catalog", { task_id: task.id, model: task.model });
    await finish(deps, task, undefined, { kind: "failed", code: Wf.UpstreamSubmitFailed });
    return undefined;
  }
  const deadline = task.startedAt!.getTime() + deps.config.generationTimeoutMs;
  const provider = deps.providers(model);
  const outcome = await advance(deps, task, model, provider, deadline);
  if (outcome.kind === "pending") return outcome.pollAt;
  await finish(deps, task, model, outcome);
  return undefined;
}

/** Runs a task to a terminal state in this call, waiting in-process between steps (tests, tools). */
export async function processGeneration(deps: GenerationDeps, taskId: string): Promise<void> {
  for (let pollAt = await generationStep(deps, taskId); pollAt !== undefined; pollAt = await generationStep(deps, taskId)) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, pollAt - Date.now())));
  }
}

/**
 * A client's cancel (80008, settled by the gateway) ends the task while its upstream job runs; the
 * step after it cancels that job. Best effort and idempotent: a job that already finished keeps
 * its outcome.
 */
async function cancelUpstreamOfCanceled(deps: GenerationDeps, task: Task): Promise<void> {
  if (task.upstreamId === null || task.errorCode !== Wf.Canceled) return;
  const model = deps.catalog.model(task.model);
  if (model)
    await deps
      .providers(model)
      .cancel(task.upstreamId)
      .catch(() => {});
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

async function advance(deps: GenerationDeps, task: Task, model: ModelEntry, provider: Provider, deadline: number): Promise<Finish | Pending> {
  let upstreamId = task.upstreamId;
  try {
    if (Date.now() >= deadline) return await timedOut(provider, upstreamId);
    if (!upstreamId) {
      const job: ProviderJob = {
        taskId: task.id,
        endpoint: task.endpoint,
        model: model.id,
        upstreamModel: model.upstreamModel,
        params: task.input as Record<string, unknown>,
        delayMs: model.simulatedDelayMs,
      };
      upstreamId = (await provider.submit(job)).upstreamId;
      // Recorded at once: a worker that takes over after a crash polls this job, never a new one.
      await recordUpstreamId(deps.db, task.id, upstreamId);
    }
    let result;
    try {
      result = await provider.poll(upstreamId);
    } catch (error) {
      if (!(error instanceof ProviderUnavailableError)) throw error;
      // Transient by design (an outage fails every running task's poll): not worth a warning each time.
      deps.logger.debug("upstream poll failed; polling again", { task_id: task.id, err: error.message });
      result = { state: "running" as const };
    }
    if (result.state === "completed") {
      return hasOutput(task.endpoint, result) ? { kind: "completed", result } : { kind: "failed", code: Wf.NoOutput };
    }
    if (result.state === "failed") return { kind: "failed", code: result.code, stage: result.stage };
    const now = Date.now();
    const wait = pollDelayMs(now - task.startedAt!.getTime());
    if (now + wait >= deadline) return await timedOut(provider, upstreamId);
    return { kind: "pending", pollAt: now + wait };
  } catch (error) {
    if (error instanceof PolicyViolation) return { kind: "failed", code: Wf.ContentPolicy, stage: error.stage };
    if (error instanceof WorkflowError) {
      // The task only says 80001; the reason (an outage, an answer over the cap) is for the operator.
      if (error.code === Wf.UpstreamSubmitFailed) deps.logger.warn("upstream submission failed", { task_id: task.id, err: error.message });
      return { kind: "failed", code: error.code };
    }
    throw error;
  }
}

async function timedOut(provider: Provider, upstreamId: string | null): Promise<Finish> {
  if (upstreamId) await provider.cancel(upstreamId).catch(() => {});
  return { kind: "failed", code: Wf.PollingTimeout };
}

async function finish(deps: GenerationDeps, task: Task, model: ModelEntry | undefined, outcome: Finish): Promise<void> {
  let settlement: TaskOutcome;
  if (outcome.kind === "failed") {
    settlement = { status: TaskStatus.Failed, code: outcome.code, charge: failedCharge(model, task.reservedCredits, outcome.code, outcome.stage) };
  } else {
    // A completed result only ever comes from a catalog model's provider.
    if (!model) return;
    try {
      const output = await storeOutputs(task.id, model.endpoint, outcome.result, deps);
      const tokens = model.pricing?.method === "tokens" ? outcome.result.tokens : undefined;
      settlement = { status: TaskStatus.Completed, output, charge: completedCharge(model, task.reservedCredits, tokens), tokens };
    } catch (error) {
      if (!(error instanceof WorkflowError)) throw error;
      deps.logger.warn("storing outputs failed", { task_id: task.id, err: error.cause ?? error });
      settlement = { status: TaskStatus.Failed, code: error.code, charge: 0 };
    }
  }
  // With the receiver's ticket taken first, the terminal statement claims attempt 1 too: after the commit it is sent at once.
  const handOff = prepareHandOff(deps, task);
  const settled = await settleTask(deps.db, task, settlement, await handOff.claimFirst()).catch(async (error: unknown) => {
    await handOff.abandoned();
    throw error;
  });
  if (!settled) return handOff.abandoned();
  recordTaskFinished(deps.metrics, settled);
  deps.logger.info("task finished", { task_id: task.id, status: settled.status, code: settled.errorCode, credits: settled.chargedCredits });
  await handOff.settled(settled);
}
