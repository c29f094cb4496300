import { findVisibleTasks, gatherBatches, readDelivery, type Database, type Queryable, type Task } from "@gen/db";
import { isTerminalTask } from "@gen/domain";
import { renderTask } from "@gen/task-render";
import type { FinishedTaskCache } from "./finished-task-cache.ts";

/** The caller's own, visible task, or null: another user's task looks exactly like a missing one. */
export type TaskReader = (id: string, userId: string) => Promise<Task | null>;

/** One poll's read on its own: the statement the gathered reads send (bench/data-scale.ts replays it). */
export async function readTask(db: Queryable, id: string, userId: string): Promise<Task | null> {
  const [task] = await findVisibleTasks(db, [id]);
  return ownedBy(task, userId);
}

// Reads gathered like submissions (@gen/db's gatherBatches): at most 64 polls per statement, a batch
// waits for one of two in flight for 1 ms at most. A statement of 64 ids costs PostgreSQL about
// what one of a single id does (bench/README.md "Poll path, round 2").
const READ_LIMITS = { maxSize: 64, maxInFlight: 2, maxWaitMs: 1 };

type Outcome = { tasks: Map<string, Task> } | { error: unknown };

interface PendingRead {
  id: string;
  answer: (outcome: Outcome) => void;
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
  const gather = gatherBatches<PendingRead>(READ_LIMITS, async (batch) => {
    let outcome: Outcome;
    try {
      const rows = await findVisibleTasks(db, [...new Set(batch.map((read) => read.id))]);
      outcome = { tasks: new Map(rows.map((task) => [task.id, task])) };
    } catch (error) {
      outcome = { error };
    }
    for (const read of batch) read.answer(outcome);
  });
  return async (id, userId) => {
    const outcome = await new Promise<Outcome>((answer) => gather({ id, answer }));
    if ("error" in outcome) throw outcome.error;
    return ownedBy(outcome.tasks.get(id), userId);
  };
}

const ownedBy = (task: Task | undefined, userId: string): Task | null => (task !== undefined && task.userId === userId ? task : null);

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
  deps: { db: Database; finishedTasks: FinishedTaskCache; readTask: TaskReader },
  id: string,
  userId: string,
  include: { webhook: boolean; billing: boolean },
): Promise<string | null> {
  const cacheKey = `${id}:${include.webhook ? "w" : ""}${include.billing ? "b" : ""}`;
  const cached = deps.finishedTasks.get(cacheKey);
  if (cached !== undefined) return cached.userId === userId ? cached.body : null;
  const task = await deps.readTask(id, userId);
  if (!task) return null;
  const webhook = include.webhook ? (task.webhookUrl === null ? null : await readDelivery(deps.db, task.id)) : undefined;
  const body = renderTask(task, { webhook, billing: include.billing });
  const final = isTerminalTask(task.status) && (!include.webhook || task.webhookUrl === null || (webhook?.deliveredBy?.finishedAt ?? null) !== null);
  if (final) deps.finishedTasks.set(cacheKey, { userId, body });
  return body;
}
