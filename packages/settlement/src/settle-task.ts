import type { Database, Prisma, Task } from "@gen/db";
import { WORKFLOW_CATALOG } from "@gen/errors";
import type { TaskOutcome } from "./task-outcome.ts";

/**
 * Moves a task from queued/in_progress to its terminal state and settles its credits, in one
 * transaction: charge and refund ledger rows (reserve = charge + refund), the refund credited to
 * the balance. Exactly once: the status condition makes a second call (a job delivered twice, a
 * cancel racing a completion) a no-op that returns null, and a unique (task_id, kind) on the
 * ledger backs that up.
 */
export async function settleTask(db: Database, taskId: string, outcome: TaskOutcome): Promise<Task | null> {
  return db.$transaction(async (tx) => {
    const task = await tx.task.findUnique({ where: { id: taskId } });
    if (!task || task.discardedAt || (task.status !== "queued" && task.status !== "in_progress")) return null;
    const charge = Math.max(0, Math.min(Math.floor(outcome.charge), task.reservedCredits));
    const refund = task.reservedCredits - charge;
    const data: Prisma.TaskUpdateManyMutationInput = {
      status: outcome.status,
      chargedCredits: charge,
      refundedCredits: refund,
      finishedAt: new Date(),
      tokensInput: outcome.tokens?.input ?? null,
      tokensOutput: outcome.tokens?.output ?? null,
    };
    if (outcome.status === "completed") {
      data.output = outcome.output as Prisma.InputJsonObject;
    } else {
      data.errorCode = outcome.code;
      data.errorMessage = outcome.message ?? WORKFLOW_CATALOG[outcome.code].message;
    }
    const moved = await tx.task.updateMany({ where: { id: taskId, status: task.status, discardedAt: null }, data });
    if (moved.count === 0) return null;
    await tx.ledgerEntry.createMany({
      data: [
        { userId: task.userId, taskId, kind: "charge", amount: charge, delta: 0 },
        { userId: task.userId, taskId, kind: "refund", amount: refund, delta: refund },
      ],
    });
    if (refund > 0) await tx.user.update({ where: { id: task.userId }, data: { credits: { increment: refund } } });
    return tx.task.findUniqueOrThrow({ where: { id: taskId } });
  });
}
