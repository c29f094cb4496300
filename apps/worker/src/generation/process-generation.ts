import type { ModelEntry } from "@gen/catalog";
import type { Task } from "@gen/db";
import { WorkflowError, type WorkflowCode } from "@gen/errors";
import { recordTaskFinished } from "@gen/metrics";
import { PolicyViolation, ProviderUnavailableError, hasOutput, type CompletedResult, type PolicyStage, type Provider, type ProviderJob } from "@gen/providers";
import { settleTask, type TaskOutcome } from "@gen/settlement";
import { completedCharge, failedCharge } from "./final-charge.ts";
import type { GenerationDeps } from "./generation-deps.ts";
import { handOffWebhook } from "./hand-off-webhook.ts";
import { storeOutputs } from "./store-outputs.ts";

const TERMINAL = new Set(["completed", "failed"]);
const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 1000;

type Finish = { kind: "completed"; result: CompletedResult } | { kind: "failed"; code: WorkflowCode; stage?: PolicyStage } | { kind: "canceled" };

/**
 * Runs one task to a terminal state. Safe to run twice (BullMQ delivers at least once, and a job
 * whose worker died is re-delivered): it reloads the task, returns if it is terminal, resumes the
 * upstream job recorded in `upstream_id` instead of submitting a second one, and settles through
 * `settleTask`, which moves the task only once. Infrastructure errors (database, Redis) are thrown
 * so that BullMQ retries the job; workflow failures end the task.
 */
export async function processGeneration(deps: GenerationDeps, taskId: string): Promise<void> {
  const loaded = await deps.db.task.findUnique({ where: { id: taskId } });
  if (!loaded || loaded.discardedAt || TERMINAL.has(loaded.status)) return;
  const task = await markStarted(deps, loaded);
  if (!task) return;
  const model = deps.catalog.model(task.model);
  if (!model) {
    deps.logger.error("task model is not in the catalog", { task_id: task.id, model: task.model });
    return finish(deps, task, undefined, { kind: "failed", code: 80001 });
  }
  const deadline = task.startedAt!.getTime() + deps.config.generationTimeoutMs;
  const provider = deps.providers(model);
  const outcome = await run(deps, task, model, provider, deadline);
  await finish(deps, task, model, outcome);
}

/**
 * Conditional on the task being queued and not discarded: the gateway's compensation for an
 * enqueue that timed out checks the same under the same row lock, so a task is either refunded and
 * hidden or started, never both. Null when it was discarded after it was loaded.
 */
async function markStarted(deps: GenerationDeps, task: Task): Promise<Task | null> {
  if (task.status === "in_progress" && task.startedAt) return task;
  await deps.db.task.updateMany({ where: { id: task.id, status: "queued", discardedAt: null }, data: { status: "in_progress", startedAt: new Date() } });
  const current = await deps.db.task.findUniqueOrThrow({ where: { id: task.id } });
  return current.discardedAt ? null : current;
}

async function run(deps: GenerationDeps, task: Task, model: ModelEntry, provider: Provider, deadline: number): Promise<Finish> {
  let upstreamId = task.upstreamId;
  try {
    if (Date.now() >= deadline) return await timedOut(provider, upstreamId);
    if (!upstreamId) {
      const job: ProviderJob = {
        taskId: task.id,
        endpoint: task.endpoint as ProviderJob["endpoint"],
        model: model.id,
        upstreamModel: model.upstreamModel,
        params: task.input as Record<string, unknown>,
        delayMs: model.simulatedDelayMs,
      };
      upstreamId = (await provider.submit(job)).upstreamId;
      // Recorded at once: a worker that takes over after a crash polls this job, never a new one.
      await deps.db.task.update({ where: { id: task.id }, data: { upstreamId } });
    }
    for (let wait = FIRST_POLL_MS; ; wait = Math.min(wait * 2, MAX_POLL_MS)) {
      const current = await deps.db.task.findUnique({ where: { id: task.id }, select: { status: true } });
      if (!current || TERMINAL.has(current.status)) {
        await provider.cancel(upstreamId).catch(() => {});
        return { kind: "canceled" };
      }
      let result;
      try {
        result = await provider.poll(upstreamId);
      } catch (error) {
        if (!(error instanceof ProviderUnavailableError)) throw error;
        result = { state: "running" as const };
      }
      if (result.state === "completed") {
        return hasOutput(task.endpoint as ProviderJob["endpoint"], result) ? { kind: "completed", result } : { kind: "failed", code: 80004 };
      }
      if (result.state === "failed") return { kind: "failed", code: result.code, stage: result.stage };
      if (Date.now() + wait >= deadline) return await timedOut(provider, upstreamId);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  } catch (error) {
    if (error instanceof PolicyViolation) return { kind: "failed", code: 80006, stage: error.stage };
    if (error instanceof WorkflowError) return { kind: "failed", code: error.code };
    throw error;
  }
}

async function timedOut(provider: Provider, upstreamId: string | null): Promise<Finish> {
  if (upstreamId) await provider.cancel(upstreamId).catch(() => {});
  return { kind: "failed", code: 80002 };
}

async function finish(deps: GenerationDeps, task: Task, model: ModelEntry | undefined, outcome: Finish): Promise<void> {
  if (outcome.kind === "canceled") return;
  let settlement: TaskOutcome;
  if (outcome.kind === "completed" && model) {
    try {
      const output = await storeOutputs(task.id, model.endpoint, outcome.result, deps);
      const tokens = model.pricing?.method === "tokens" ? outcome.result.tokens : undefined;
      settlement = { status: "completed", output, charge: completedCharge(model, task.reservedCredits, tokens), tokens };
    } catch (error) {
      if (!(error instanceof WorkflowError)) throw error;
      deps.logger.warn("storing outputs failed", { task_id: task.id, err: error.cause ?? error });
      settlement = { status: "failed", code: error.code, charge: 0 };
    }
  } else if (outcome.kind === "failed") {
    settlement = { status: "failed", code: outcome.code, charge: failedCharge(model, task.reservedCredits, outcome.code, outcome.stage) };
  } else {
    return;
  }
  const settled = await settleTask(deps.db, task.id, settlement);
  if (settled) {
    recordTaskFinished(deps.metrics, settled);
    deps.logger.info("task finished", { task_id: task.id, status: settled.status, code: settled.errorCode, credits: settled.chargedCredits });
    await handOffWebhook(deps, settled);
  }
}
