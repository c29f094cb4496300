import { createHash } from "node:crypto";
import type { Endpoint } from "@gen/catalog";
import { IDEMPOTENCY_WINDOW_MS, Prisma, TASK_COLUMNS, isDatabaseUnavailable, type Database, type Task } from "@gen/db";
import { ApiError } from "@gen/errors";
import { newTaskId } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, generationJobId } from "@gen/queues";
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
 * Validates, prices, then in ONE transaction reserves credits, inserts the task, its ledger row,
 * its webhook state and its idempotency key; then ONE Redis call enqueues the job (id = task id).
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
    if (input.idempotencyKey && (isUniqueViolation(error) || (error instanceof ApiError && error.code === 30001))) {
      const replay = await findReplay(deps.db, input.userId, input.idempotencyKey, requestHash);
      if (replay) return { task: replay, replayed: true };
    }
    if (error instanceof ApiError) throw error;
    if (isDatabaseUnavailable(error)) throw new ApiError(70002);
    deps.logger.error("task insert failed", { request_id: input.requestId, err: error });
    throw new ApiError(60001);
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
    throw new ApiError(60002);
  }
  return result;
}

type Submission = ReturnType<typeof validateSubmission>;

async function persist(db: Database, input: SubmitInput, submission: Submission, requestHash: string): Promise<{ task: Task; replayed: boolean }> {
  if (!input.idempotencyKey) return { task: await insertTask(db, input, submission), replayed: false };
  return db.$transaction(async (tx) => {
    if (input.idempotencyKey) {
      const existing = await tx.idempotencyKey.findUnique({ where: { userId_key: { userId: input.userId, key: input.idempotencyKey } } });
      if (existing && existing.createdAt.getTime() > Date.now() - IDEMPOTENCY_WINDOW_MS) {
        if (existing.requestHash !== requestHash) {
          throw new ApiError(20003, "Idempotency-Key was already used with a different request body");
        }
        const task = await tx.task.findUnique({ where: { id: existing.taskId } });
        if (task && !task.discardedAt) return { task, replayed: true };
      }
      // Only the row read above: a concurrent request may have replaced it with a fresh key since,
      // which this one must then lose to on the unique index (and replay).
      if (existing) await tx.idempotencyKey.deleteMany({ where: { userId: input.userId, key: input.idempotencyKey, taskId: existing.taskId } });
    }

    const price = submission.price.reserve;
    const debited = await tx.user.updateMany({ where: { id: input.userId, credits: { gte: price } }, data: { credits: { decrement: price } } });
    if (debited.count === 0) {
      const user = await tx.user.findUnique({ where: { id: input.userId }, select: { credits: true } });
      throw new ApiError(30001, `Insufficient credits: this request needs ${price}, the balance is ${user?.credits ?? 0}`);
    }

    const taskId = newTaskId();
    const task = await tx.task.create({
      data: {
        id: taskId,
        userId: input.userId,
        endpoint: input.endpoint,
        model: submission.model.id,
        status: "queued",
        input: submission.params as Prisma.InputJsonObject,
        webhookUrl: submission.webhookUrl,
        requestId: input.requestId,
        billingMethod: submission.price.method,
        reservedCredits: price,
      },
    });
    await tx.ledgerEntry.create({ data: { userId: input.userId, taskId, kind: "reserve", amount: price, delta: -price } });
    if (submission.webhookUrl) {
      await tx.webhookDelivery.create({ data: { taskId, url: submission.webhookUrl, status: "pending" } });
    }
    if (input.idempotencyKey) {
      await tx.idempotencyKey.create({ data: { userId: input.userId, key: input.idempotencyKey, requestHash, taskId } });
    }
    return { task, replayed: false };
  });
}

/**
 * The common case (no Idempotency-Key) as ONE statement, so one round trip and no transaction to
 * open: the conditional debit gates every insert, and PostgreSQL applies all or none of them.
 * Plain SQL, because Prisma's client spends more CPU than everything else on this path together.
 */
async function insertTask(db: Database, input: SubmitInput, submission: Submission): Promise<Task> {
  const price = submission.price.reserve;
  const { rows } = await db.$sql.query<Task>(
    `WITH debit AS (
       UPDATE users SET credits = credits - $3 WHERE id = $2 AND credits >= $3 RETURNING id
     ), task AS (
       INSERT INTO tasks AS t (id, user_id, endpoint, model, status, input, webhook_url, request_id, billing_method, reserved_credits)
       SELECT $1, $2, $4, $5, 'queued', $6::jsonb, $7, $8, $9, $3 FROM debit
       RETURNING ${TASK_COLUMNS}
     ), reserve AS (
       INSERT INTO ledger_entries (user_id, task_id, kind, amount, delta) SELECT $2, $1, 'reserve', $3, -$3 FROM debit
     ), webhook AS (
       INSERT INTO webhook_deliveries (task_id, url, status) SELECT $1, $7, 'pending' FROM debit WHERE $7::text IS NOT NULL
     )
     SELECT * FROM task`,
    [newTaskId(), input.userId, price, input.endpoint, submission.model.id, JSON.stringify(submission.params), submission.webhookUrl, input.requestId, submission.price.method],
  );
  if (rows[0]) return rows[0];
  const user = await db.user.findUnique({ where: { id: input.userId }, select: { credits: true } });
  throw new ApiError(30001, `Insufficient credits: this request needs ${price}, the balance is ${user?.credits ?? 0}`);
}

async function findReplay(db: Database, userId: string, key: string, requestHash: string): Promise<Task | null> {
  const existing = await db.idempotencyKey.findUnique({ where: { userId_key: { userId, key } } });
  if (!existing) return null;
  if (existing.requestHash !== requestHash) throw new ApiError(20003, "Idempotency-Key was already used with a different request body");
  return db.task.findFirst({ where: { id: existing.taskId, discardedAt: null } });
}

/**
 * Undo a committed submission whose job could not be enqueued: full refund, task hidden, key freed.
 * Only while the task is still queued, atomically against the worker's claim: a job that lands
 * later finds the task discarded and ends without running. Returns the task when a worker had
 * already taken it (it runs and settles normally), null when compensated.
 */
async function compensate(deps: GatewayDeps, task: Task, requestId: string): Promise<Task | null> {
  try {
    return await deps.db.$transaction(async (tx) => {
      const hidden = await tx.task.updateMany({
        where: { id: task.id, status: "queued", discardedAt: null },
        data: { discardedAt: new Date(), chargedCredits: 0, refundedCredits: task.reservedCredits },
      });
      if (hidden.count === 0) return tx.task.findUniqueOrThrow({ where: { id: task.id } });
      await tx.user.update({ where: { id: task.userId }, data: { credits: { increment: task.reservedCredits } } });
      await tx.ledgerEntry.create({ data: { userId: task.userId, taskId: task.id, kind: "refund", amount: task.reservedCredits, delta: task.reservedCredits } });
      await tx.ledgerEntry.create({ data: { userId: task.userId, taskId: task.id, kind: "charge", amount: 0, delta: 0 } });
      await tx.idempotencyKey.deleteMany({ where: { userId: task.userId, taskId: task.id } });
      return null;
    });
  } catch (error) {
    // Both stores failing at once: the task stays committed and the reconciler will run it.
    deps.logger.error("compensation failed; the reconciler will enqueue the task", { request_id: requestId, task_id: task.id, err: error });
    throw new ApiError(60099);
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

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002";
}

