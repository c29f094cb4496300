import { findVisibleTasks, findVisibleTasksWithDelivery, gatherBatches, type Queryable, type Task, type TaskWithDelivery } from "@gen/db";
import { isTerminalTask } from "@gen/domain";
import { renderTask } from "@gen/task-render";
import type { FinishedTaskCache } from "./finished-task-cache.ts";

/** The caller's own, visible task, or null: another user's task looks exactly like a missing one. */
export type TaskReader<T extends Task = Task> = (id: string, userId: string) => Promise<T | null>;

/** One poll's read on its own: the statement the gathered reads send (bench/data-scale.ts replays it). */
export async function readTask(db: Queryable, id: string, userId: string): Promise<Task | null> {
  const [task] = await findVisibleTasks(db, [id]);
  return ownedBy(task, userId);
}

// Reads gathered like submissions (@gen/db's gatherBatches): at most 64 polls per statement, a batch
// waits for one of two in flight for 1 ms at most. A statement of 64 ids costs PostgreSQL about
// what one of a single id does.
const READ_LIMITS = { maxSize: 64, maxInFlight: 2, maxWaitMs: 1 };

type Outcome<T> = { tasks: Map<string, T> } | { error: unknown };

interface PendingRead<T> {
  id: string;
  answer: (outcome: Outcome<T>) => void;
}

/**
 * Polls whose reads start together (the same event-loop turn, or while earlier reads are in
 * flight) share ONE statement: `id = ANY(...)` over their ids, each id once. A poll only ever
 * joins a statement that is sent after it arrived, never one already in flight, so its answer
 * shows at least everything committed before the request came. Ownership is checked per poll,
 * as `findVisibleTask` did in SQL. A failed statement fails every poll in it with its error
 * (70002 when PostgreSQL is unreachable, as for a read of its own).
 */
export function createTaskReader(db: Queryable): TaskReader {
  return gatheredReader(db, findVisibleTasks);
}

/** The same gathered reads for polls with `?include=webhook`: each task with its delivery, read in the same statement. */
export function createTaskWithDeliveryReader(db: Queryable): TaskReader<TaskWithDelivery> {
  return gatheredReader(db, findVisibleTasksWithDelivery);
}

function gatheredReader<T extends Task>(db: Queryable, statement: (db: Queryable, ids: readonly string[]) => Promise<T[]>): TaskReader<T> {
  const gather = gatherBatches<PendingRead<T>>(READ_LIMITS, async (batch) => {
    let outcome: Outcome<T>;
    try {
      const rows = await statement(db, [...new Set(batch.map((read) => read.id))]);
      outcome = { tasks: new Map(rows.map((task) => [task.id, task])) };
    } catch (error) {
      outcome = { error };
    }
    for (const read of batch) read.answer(outcome);
  });
  return async (id, userId) => {
    const outcome = await new Promise<Outcome<T>>((answer) => gather({ id, answer }));
    if ("error" in outcome) throw outcome.error;
    return ownedBy(outcome.tasks.get(id), userId);
  };
}

const ownedBy = <T extends Task>(task: T | undefined, userId: string): T | null => (task !== undefined && task.userId === userId ? task : null);

/**
 * The body of `GET /api/v1/tasks/{id}` for its owner, or null (not theirs, or no such task).
 *
 * An answer is kept in the process's FinishedTaskCache only once it can never change: the task is
 * terminal (its row is final: settlement writes status, charge and refund in one transaction, and a
 * terminal task is never discarded) and, when the answer shows the webhook, there is none or it is
 * delivered (@gen/task-render then shows the first delivering attempt, finished, whatever a later
 * manual redelivery does to the row). A pending, in-progress or failed delivery can still move (a failed one by a
 * console redelivery), so those answers are read afresh every time. A task's owner never changes,
 * so a cached answer for someone else is a 40001 without a read.
 */
export async function readTaskAnswer(
  deps: { finishedTasks: FinishedTaskCache; readTask: TaskReader; readTaskWithDelivery: TaskReader<TaskWithDelivery> },
  id: string,
  userId: string,
  include: { webhook: boolean; billing: boolean },
): Promise<string | null> {
  const cacheKey = `${id}:${include.webhook ? "w" : ""}${include.billing ? "b" : ""}`;
  const cached = deps.finishedTasks.get(cacheKey);
  if (cached !== undefined) return cached.userId === userId ? cached.body : null;
  // With the webhook, the task and its delivery come from one statement: one instant of both.
  const withDelivery = include.webhook ? await deps.readTaskWithDelivery(id, userId) : undefined;
  const task = withDelivery === undefined ? await deps.readTask(id, userId) : withDelivery;
  if (!task) return null;
  const webhook = withDelivery?.webhook;
  const body = renderTask(task, { webhook, billing: include.billing });
  const final = isTerminalTask(task.status) && (!include.webhook || task.webhookUrl === null || (webhook?.deliveredBy?.finishedAt ?? null) !== null);
  if (final) deps.finishedTasks.set(cacheKey, { userId, body });
  return body;
}
