import { LedgerKind } from "@gen/domain";
import { removeTasks, type Queryable, type RemovedTasks } from "@gen/db";

/**
 * Task retention's side of the ledger: removed tasks take their ledger entries with them, and each
 * user whose removed entries moved the balance gets one `carry_forward` entry with their sum
 * (amount: its magnitude), in the same statement, so `credits = SUM(delta)` holds before and after
 * and the balance itself never moves. The archive (TASK_ARCHIVE) keeps the removed entries.
 */
export async function removeFinishedTasks(db: Queryable, taskIds: readonly string[], cutoff: Date): Promise<RemovedTasks> {
  return removeTasks(db, taskIds, { cutoff, carry: LedgerKind.CarryForward });
}
