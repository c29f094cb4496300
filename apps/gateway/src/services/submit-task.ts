import { createHash } from "node:crypto";
import type { Endpoint } from "@gen/catalog";
import {
  IDEMPOTENCY_WINDOW_MS,
  deleteIdempotencyKey,
  findIdempotencyKey,
  findVisibleTask,
  gatherBatches,
  isDatabaseUnavailable,
  serialLanes,
  type Database,
  type Task,
  type UserRowLocks,
} from "@gen/db";
import { ApiError, Err } from "@gen/errors";
import { newTaskId } from "@gen/ids";
import { enqueueGenerationJobs, withDeadline } from "@gen/queues";
import { compensateSubmission, reserveTask, reserveTasks, type TaskToReserve } from "@gen/ledger";
import { annotateSpan, inSpan, jobTraceMetadata } from "@gen/tracing";
import type { GatewayDeps } from "./gateway-deps.ts";
import { priceSubmission, refuseInternalUrls, validateSubmission, type ValidSubmission } from "./validate-submission.ts";

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

// Group commit (docs/internals.md#submission-batching-group-commit): submissions that reach the
// insert together share one statement and one enqueue. At most 32 per batch
// (bench/round-trip-cost.ts: PostgreSQL's cost per task is 0.04 ms in a statement of 32, 0.67 ms
// alone); while a batch is being written the next one gathers, for 10 ms at most. One batch in
// flight rather than two: batches of 14 instead of 10 at 32 connections, and less CPU per
// submission in all three processes.
const BATCH_LIMITS = { maxSize: 32, maxInFlight: 1, maxWaitMs: 10 };

// A batch does not wait for a user row another transaction holds (an operator's open transaction,
// another gateway's batch, a worker refunding part of a task): that user's requests go on in the
// user's own lane, one statement at a time per user that waits for the row (statement_timeout,
// then 70002), at most 4 users at once and never more than half the pool (DATABASE_POOL_SIZE, at
// least 2), so that waiting users always leave connections to batches, key lookups and polls
// (docs/internals.md#submission-batching-group-commit).
function lockedUserLanes(poolSize: number) {
  return { maxSize: BATCH_LIMITS.maxSize, maxLanes: Math.max(1, Math.min(4, Math.floor(poolSize / 2))) };
}

type Submitted = { task: Task; replayed: boolean };
type Outcome = { ok: true; value: Submitted } | { ok: false; error: unknown };

/** An Idempotency-Key with the hash of the request it came with (hashed only when there is a key). */
interface Idempotency {
  key: string;
  requestHash: string;
}

interface Pending {
  input: SubmitInput;
  submission: ValidSubmission;
  idempotency: Idempotency | undefined;
  taskId: string;
  /** The request's trace context for its generation job (tracing only). */
  traceContext: string | undefined;
  answer: (outcome: Outcome) => void;
}

/**
 * The submit service. Each request is validated and priced, and an Idempotency-Key already
 * answered is replayed, on its own; then the requests that reach this point together (the same
 * event-loop turn, or while earlier batches are being written: @gen/db's gatherBatches) are written
 * together: ONE statement (@gen/ledger reserveTasks) reserves credits and inserts
 * every task, its ledger row, its webhook state and its idempotency key, then ONE Redis call
 * enqueues their jobs (job id = task id). Each request still gets the answer it would get alone:
 * - a task the user's balance did not cover in arrival order is retried alone after the batch
 *   (a cheaper one may still fit; the others answer 30001 with the balance);
 * - a second request with an Idempotency-Key already in the batch waits for the batch and then
 *   replays the first one's task;
 * - a statement that fails for another reason than an unreachable PostgreSQL (70002 for all) is
 *   retried one request at a time, so a key committed meanwhile elsewhere replays and a row
 *   PostgreSQL refuses fails only its own request;
 * - a user whose row another transaction holds is skipped, not waited for: that user's requests go
 *   on in the user's lane (lockedUserLanes), written as above by a statement that waits for the
 *   row, so only they wait, and only they fail (70002) when the wait reaches statement_timeout.
 * If the enqueue fails, every task of the batch still queued is refunded and hidden (60002); one a
 * worker took meanwhile (the job landed late) is the answer. A gateway that dies in between leaves
 * committed tasks that the worker's reconciler enqueues later.
 */
export function createSubmitter(deps: GatewayDeps): (input: SubmitInput) => Promise<Submitted> {
  const lanes = serialLanes<Pending>(
    lockedUserLanes(deps.config.databasePoolSize),
    (pending) => pending.input.userId,
    (batch) => commitBatch(deps, batch, "wait", (deferred) => refuseDeferred(deps, deferred)),
  );
  const gather = gatherBatches<Pending>(BATCH_LIMITS, (batch) => commitBatch(deps, batch, "skipLocked", lanes));
  return (input) => inSpan("task.submit", { "gen.endpoint": input.endpoint }, () => submit(input));

  async function submit(input: SubmitInput): Promise<Submitted> {
    const checked = validateSubmission(deps.catalog, input.endpoint, input.body);
    await refuseInternalUrls(deps.urlGuard, checked);
    const submission = priceSubmission(deps.catalog, checked);
    const idempotency = input.idempotencyKey ? { key: input.idempotencyKey, requestHash: hashRequest(input.endpoint, input.body) } : undefined;
    if (idempotency) {
      const replay = await answerFailures(deps, input, idempotency, async () => {
        const task = await replayOf(deps.db, input.userId, idempotency, true);
        return task ? { task, replayed: true } : null;
      });
      if (replay) return replay;
    }
    const outcome = await new Promise<Outcome>((answer) =>
      gather({ input, submission, idempotency, taskId: newTaskId(), traceContext: jobTraceMetadata(), answer }),
    );
    if (outcome.ok) {
      annotateSpan({ "gen.task_id": outcome.value.task.id });
      return outcome.value;
    }
    throw outcome.error;
  }
}

/**
 * Writes a batch and answers each of its requests, but those of users whose row was held elsewhere
 * (only with "skipLocked"): they are handed to `sendOn` at once, before this batch's enqueue, and
 * answered from there.
 */
async function commitBatch(deps: GatewayDeps, batch: Pending[], locks: UserRowLocks, sendOn: (deferred: Pending[]) => void): Promise<void> {
  let answered = batch;
  let outcomes: Outcome[];
  try {
    const persisted = await persistBatch(deps, batch, locks);
    const deferred = batch.filter((_, i) => persisted[i] === LOCKED);
    if (deferred.length > 0) {
      sendOn(deferred);
      answered = batch.filter((_, i) => persisted[i] !== LOCKED);
    }
    outcomes = persisted.filter((outcome): outcome is Outcome => outcome !== LOCKED);
    await enqueueCreated(deps, answered, outcomes);
  } catch (error) {
    // Not expected (each step answers per request); no request may be left waiting.
    deps.logger.error("submission batch failed", { request_ids: answered.map((p) => p.input.requestId), err: error });
    outcomes = answered.map(() => ({ ok: false, error: new ApiError(Err.Internal) }));
  }
  answered.forEach((pending, i) => pending.answer(outcomes[i]!));
}

/**
 * A statement that waits for the row never reports it held; should one ever do, its requests are
 * answered 70002 (as when the wait reaches statement_timeout) rather than left without an answer.
 */
function refuseDeferred(deps: GatewayDeps, deferred: Pending[]): void {
  deps.logger.error("user row reported held by a statement that waits for it", { request_ids: deferred.map((p) => p.input.requestId) });
  for (const pending of deferred) pending.answer({ ok: false, error: new ApiError(Err.DatabaseUnavailable) });
}

/** A request of a user whose row another transaction held: not written, sent on in the user's lane. */
const LOCKED = Symbol("locked");

async function persistBatch(deps: GatewayDeps, batch: Pending[], locks: UserRowLocks): Promise<(Outcome | typeof LOCKED)[]> {
  const outcomes: (Outcome | typeof LOCKED | undefined)[] = batch.map(() => undefined);
  // Users whose row was held: every request of theirs in the batch goes on in arrival order, together.
  const locked = new Set<string>();
  // The statement takes each user's Idempotency-Key once; a repeat goes alone after it (and replays).
  const keys = new Set<string>();
  const together: number[] = [];
  for (let i = 0; i < batch.length; i++) {
    const { userId, idempotencyKey } = batch[i]!.input;
    if (idempotencyKey !== undefined) {
      const key = `${userId}\0${idempotencyKey}`;
      if (keys.has(key)) continue;
      keys.add(key);
    }
    together.push(i);
  }
  try {
    const { tasks, lockedUserIds } = await reserveTasks(
      deps.db,
      together.map((i) => taskToReserve(batch[i]!)),
      locks,
    );
    together.forEach((i, n) => {
      const task = tasks[n];
      if (task) outcomes[i] = { ok: true, value: { task, replayed: false } };
    });
    if (locks === "skipLocked") for (const userId of lockedUserIds) locked.add(userId);
  } catch (error) {
    if (isDatabaseUnavailable(error)) for (const i of together) outcomes[i] = { ok: false, error: new ApiError(Err.DatabaseUnavailable) };
    else deps.logger.warn("batched task insert failed; inserting one by one", { request_ids: together.map((i) => batch[i]!.input.requestId), err: error });
  }
  // In arrival order, so the same user's requests are debited as they would be one after another.
  // A row held since the statement is skipped again here, never waited for, in a batch.
  for (const [i, pending] of batch.entries()) {
    if (outcomes[i]) continue;
    if (locked.has(pending.input.userId)) {
      outcomes[i] = LOCKED;
      continue;
    }
    try {
      const written = await answerFailures(deps, pending.input, pending.idempotency, () => persistAlone(deps.db, pending, locks));
      if (written) outcomes[i] = { ok: true, value: written };
      else {
        locked.add(pending.input.userId);
        outcomes[i] = LOCKED;
      }
    } catch (error) {
      outcomes[i] = { ok: false, error };
    }
  }
  return outcomes as (Outcome | typeof LOCKED)[];
}

/** One Redis call for every task the batch created; on failure each is compensated on its own. */
async function enqueueCreated(deps: GatewayDeps, batch: Pending[], outcomes: Outcome[]): Promise<void> {
  const created: { i: number; task: Task }[] = [];
  for (let i = 0; i < outcomes.length; i++) {
    const outcome = outcomes[i]!;
    if (outcome.ok && !outcome.value.replayed) created.push({ i, task: outcome.value.task });
  }
  if (created.length === 0) return;
  try {
    await withDeadline(
      enqueueGenerationJobs(
        deps.generationQueue,
        created.map(({ task }) => task.id),
        created.map(({ i }) => batch[i]!.traceContext),
      ),
      ENQUEUE_TIMEOUT_MS,
      "enqueue",
    );
  } catch (error) {
    await Promise.all(
      created.map(async ({ i, task }) => {
        const requestId = batch[i]!.input.requestId;
        deps.logger.error("enqueue failed; compensating", { request_id: requestId, task_id: task.id, err: error });
        try {
          const current = await compensate(deps, task, requestId);
          // The job landed after all (a slow Redis) and a worker already took the task: it runs and is
          // charged, so the client is told about the task, never "refunded".
          outcomes[i] = current ? { ok: true, value: { task: current, replayed: false } } : { ok: false, error: new ApiError(Err.WorkflowStartFailed) };
        } catch (failure) {
          outcomes[i] = { ok: false, error: failure };
        }
      }),
    );
    // A repeated Idempotency-Key of the batch replayed a task that is now refunded and hidden: it
    // gets the same 60002 (its key is freed, so a retry creates the task), never a vanished task.
    const refunded = new Set(created.filter(({ i }) => isRefunded(outcomes[i]!)).map(({ task }) => task.id));
    outcomes.forEach((outcome, i) => {
      if (outcome.ok && outcome.value.replayed && refunded.has(outcome.value.task.id))
        outcomes[i] = { ok: false, error: new ApiError(Err.WorkflowStartFailed) };
    });
  }
}

const isRefunded = (outcome: Outcome) => !outcome.ok && outcome.error instanceof ApiError && outcome.error.code === Err.WorkflowStartFailed;

/**
 * Runs a step of one request's persistence and turns a failure into the request's answer.
 * Two requests racing on one Idempotency-Key: the loser reads the winner's task. It loses on the
 * key's unique index, or earlier on the balance when it covers one task only (the loser's debit
 * waited for the winner's commit, so the winner's key is visible by now).
 */
async function answerFailures<T extends Submitted | null>(
  deps: GatewayDeps,
  input: SubmitInput,
  idempotency: Idempotency | undefined,
  step: () => Promise<T>,
): Promise<T | Submitted> {
  try {
    return await step();
  } catch (error) {
    if (idempotency && (isUniqueViolation(error) || (error instanceof ApiError && error.code === Err.InsufficientCredits))) {
      const replay = await replayOf(deps.db, input.userId, idempotency, false);
      if (replay) return { task: replay, replayed: true };
    }
    if (error instanceof ApiError) throw error;
    if (isDatabaseUnavailable(error)) throw new ApiError(Err.DatabaseUnavailable);
    deps.logger.error("task insert failed", { request_id: input.requestId, err: error });
    throw new ApiError(Err.PersistFailed);
  }
}

const taskToReserve = ({ input, submission, idempotency, taskId }: Pending): TaskToReserve => ({
  id: taskId,
  userId: input.userId,
  endpoint: input.endpoint,
  model: submission.model.id,
  input: submission.params,
  webhookUrl: submission.webhookUrl,
  requestId: input.requestId,
  billingMethod: submission.price.method,
  price: submission.price.reserve,
  idempotency,
});

/** One request written on its own, as before group commit: the batch's fallback. Null: the user's row was held (only with "skipLocked"). */
async function persistAlone(db: Database, pending: Pending, locks: UserRowLocks): Promise<Submitted | null> {
  const { input, idempotency } = pending;
  if (idempotency) {
    const replay = await replayOf(db, input.userId, idempotency, true);
    if (replay) return { task: replay, replayed: true };
  }
  const reserved = await reserveTask(db, taskToReserve(pending), locks);
  if ("locked" in reserved) return null;
  if ("insufficient" in reserved) {
    const price = pending.submission.price.reserve;
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
async function replayOf(db: Database, userId: string, { key, requestHash }: Idempotency, beforeInsert: boolean): Promise<Task | null> {
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
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** PostgreSQL's unique_violation (the pg driver's error carries the SQLSTATE). */
function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}
