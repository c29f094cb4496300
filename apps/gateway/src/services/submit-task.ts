import { createHash } from "node:crypto";
import type { Endpoint } from "@gen/catalog";
import { IDEMPOTENCY_WINDOW_MS, deleteIdempotencyKey, findIdempotencyKey, findVisibleTask, isDatabaseUnavailable, type Database, type Task } from "@gen/db";
import { ApiError, Err } from "@gen/errors";
import { newTaskId } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, generationJobId } from "@gen/queues";
import { compensateSubmission, reserveTask } from "@gen/ledger";
import type { GatewayDeps } from "./gateway-deps.ts";
import { validateSubmission } from "./validate-submission.ts";
import { withDeadline } from "@gen/queues";

export interface SubmitInput {
  userId: string;
  requestId: string;
  endpoint: Endpoint;
  body: Record<string, unknown>;
  idempotencyKey: string | undefined;
}

// BullMQ waits for a connection forever; a request must not. A job that lands after the time-out
// finds its task discarded and ends without running.
const ENQUEUE_TIMEOUT_MS = 2000;

/**
 * Validates, prices, then in ONE statement (@gen/ledger reserveTask) reserves credits, inserts the
 * task, its ledger row, its webhook state and its idempotency key; then ONE Redis call enqueues the
 * job (id = task id).
 * If that enqueue fails while the task is still queued, the reservation is refunded and the task
 * hidden (60002); if a worker took it meanwhile (the job landed late), the task is the answer. A gateway that
 * dies in between leaves a committed task that the worker's reconciler enqueues later.
 */
export async function submitTask(deps: GatewayDeps, input: SubmitInput): Promise<{ task: Task; replayed: boolean }> {
  const submission = validateSubmission(deps.catalog, input.endpoint, input.body);
  const requestHash = hashRequest(input.endpoint, input.body);

  let result: { task: Task; replayed: boolean };
  try {
    result = await persist(deps.db, input, submission, requestHash);
  } catch (error) {
    // Two requests racing on one Idempotency-Key: the loser reads the winner's task. It loses on
    // the key's unique index, or earlier on the balance when it covers one task only (the loser's
    // debit waited for the winner's commit, so the winner's key is visible by now).
    if (input.idempotencyKey && (isUniqueViolation(error) || (error instanceof ApiError && error.code === Err.InsufficientCredits))) {
      const replay = await replayOf(deps.db, input.userId, input.idempotencyKey, requestHash, false);
      if (replay) return { task: replay, replayed: true };
    }
    if (error instanceof ApiError) throw error;
    if (isDatabaseUnavailable(error)) throw new ApiError(Err.DatabaseUnavailable);
    deps.logger.error("task insert failed", { request_id: input.requestId, err: error });
    throw new ApiError(Err.PersistFailed);
  }
  if (result.replayed) return result;

  try {
    await withDeadline(
      deps.generationQueue.add("generate", { taskId: result.task.id }, { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(result.task.id) }),
      ENQUEUE_TIMEOUT_MS,
      "enqueue",
    );
  } catch (error) {
    deps.logger.error("enqueue failed; compensating", { request_id: input.requestId, task_id: result.task.id, err: error });
    const current = await compensate(deps, result.task, input.requestId);
    // The job landed after all (a slow Redis) and a worker already took the task: it runs and is
    // charged, so the client is told about the task, never "refunded".
    if (current) return { task: current, replayed: false };
    throw new ApiError(Err.WorkflowStartFailed);
  }
  return result;
}

type Submission = ReturnType<typeof validateSubmission>;

async function persist(db: Database, input: SubmitInput, submission: Submission, requestHash: string): Promise<{ task: Task; replayed: boolean }> {
  if (input.idempotencyKey) {
    const replay = await replayOf(db, input.userId, input.idempotencyKey, requestHash, true);
    if (replay) return { task: replay, replayed: true };
  }
  const price = submission.price.reserve;
  const reserved = await reserveTask(db, {
    id: newTaskId(),
    userId: input.userId,
    endpoint: input.endpoint,
    model: submission.model.id,
    input: submission.params,
    webhookUrl: submission.webhookUrl,
    requestId: input.requestId,
    billingMethod: submission.price.method,
    price,
    idempotency: input.idempotencyKey ? { key: input.idempotencyKey, requestHash } : undefined,
  });
  if ("insufficient" in reserved) {
    throw new ApiError(Err.InsufficientCredits, `Insufficient credits: this request needs ${price}, the balance is ${reserved.insufficient.balance}`);
  }
  return { task: reserved.task, replayed: false };
}

/**
 * The task an Idempotency-Key already answers with, or null. Before the insert (`beforeInsert`)
 * a key past its window, or whose task was discarded, is freed (only that row: a concurrent request
 * may have replaced it with a fresh key since, which this one must then lose to on the unique index,
 * and replay). After losing, the winner's key is read whatever its age.
 */
async function replayOf(db: Database, userId: string, key: string, requestHash: string, beforeInsert: boolean): Promise<Task | null> {
  const existing = await findIdempotencyKey(db, userId, key);
  if (!existing) return null;
  const live = !beforeInsert || existing.createdAt.getTime() > Date.now() - IDEMPOTENCY_WINDOW_MS;
  if (live) {
    if (existing.requestHash !== requestHash) throw new ApiError(Err.ParameterInvalid, "Idempotency-Key was already used with a different request body");
    const task = await findVisibleTask(db, existing.taskId, userId);
    if (task || !beforeInsert) return task ?? null;
  }
  await deleteIdempotencyKey(db, userId, key, existing.taskId);
  return null;
}

/**
 * Undo a committed submission whose job could not be enqueued, through the ledger's settle path
 * (@gen/ledger compensateSubmission): full refund, task hidden, key freed. Returns the task when a
 * worker had already taken it (it runs and settles normally), null when compensated.
 */
async function compensate(deps: GatewayDeps, task: Task, requestId: string): Promise<Task | null> {
  try {
    const result = await compensateSubmission(deps.db, task.id);
    if (result.compensated) return null;
    if (!result.task) throw new Error(`task ${task.id} vanished during compensation`);
    return result.task;
  } catch (error) {
    // Both stores failing at once: the task stays committed and the reconciler will run it.
    deps.logger.error("compensation failed; the reconciler will enqueue the task", { request_id: requestId, task_id: task.id, err: error });
    throw new ApiError(Err.Internal);
  }
}

function hashRequest(endpoint: Endpoint, body: Record<string, unknown>): string {
  return createHash("sha256").update(endpoint).update("\0").update(stableStringify(body)).digest("hex");
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** PostgreSQL's unique_violation (the pg driver's error carries the SQLSTATE). */
function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

