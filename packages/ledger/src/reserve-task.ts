import { insertTask, readCredits, type NewTask, type Queryable, type Task } from "@gen/db";
import { reserveEntry } from "./ledger-entries.ts";

export type TaskToReserve = Omit<NewTask, "reserve"> & { price: number };

/**
 * Creates the task with its reservation: the balance is debited by `price` and the reserve entry
 * written in the same statement as the task (one round trip), or nothing happens when the balance
 * does not cover it; then the balance is read for the client's message.
 */
export async function reserveTask(db: Queryable, task: TaskToReserve): Promise<{ task: Task } | { insufficient: { balance: number } }> {
  const { price, ...rest } = task;
  const created = await insertTask(db, { ...rest, reserve: reserveEntry(price) });
  if (created) return { task: created };
  return { insufficient: { balance: (await readCredits(db, task.userId)) ?? 0 } };
}
