import { isTerminalTask } from "@gen/domain";
import { readOrphanEntries, readTaskLedgers, readUserLedgers, type Queryable, type TaskLedger, type UserLedger } from "@gen/db";

const PAGE = 2000;

/**
 * The ledger's invariant, checked over the whole database (or one user): per task exactly one
 * reserve of the task's reserved_credits; while it is open no charge and no refund; once it is
 * closed (terminal, or discarded by 60002) exactly one charge and one refund with reserved =
 * charged + refunded, as the task row says; per user credits = the sum of the ledger's deltas, and
 * no entry naming a task that does not exist. Returns one line per violation (none: consistent).
 * Reads in keyset pages, so it runs on a live database without holding anything.
 */
export async function checkLedger(db: Queryable, options: { userId?: string } = {}): Promise<string[]> {
  const violations: string[] = [];
  for (let after = ""; ;) {
    const page = await readTaskLedgers(db, { userId: options.userId, after, limit: PAGE });
    for (const task of page) violations.push(...taskViolations(task).map((rule) => `task ${task.taskId} (user ${task.userId}): ${rule}`));
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.taskId;
  }
  for (let after = ""; ;) {
    const page = await readUserLedgers(db, { userId: options.userId, after, limit: PAGE });
    for (const user of page) violations.push(...userViolations(user).map((rule) => `user ${user.userId}: ${rule}`));
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.userId;
  }
  for (const entry of await readOrphanEntries(db, options.userId)) {
    violations.push(`ledger entry ${entry.id} (user ${entry.userId}): ${entry.kind} names task ${entry.taskId}, which does not exist`);
  }
  return violations;
}

function taskViolations(t: TaskLedger): string[] {
  const found: string[] = [];
  if (t.reserves !== 1) found.push(`${t.reserves} reserve entries, expected exactly 1`);
  else if (t.reserved !== t.reservedCredits) found.push(`reserve entry of ${t.reserved} but the task reserved ${t.reservedCredits}`);
  if (t.grants > 0) found.push(`${t.grants} grant entries name this task`);
  const closed = t.discarded || isTerminalTask(t.status);
  if (closed) {
    if (t.charges !== 1 || t.refunds !== 1) found.push(`${t.charges} charge and ${t.refunds} refund entries on a closed task, expected exactly 1 each`);
    else if (t.reserved !== t.charged + t.refunded) found.push(`reserved ${t.reserved} != charged ${t.charged} + refunded ${t.refunded}`);
    else if (t.chargedCredits !== t.charged || t.refundedCredits !== t.refunded) {
      found.push(`the task row says charged ${t.chargedCredits} and refunded ${t.refundedCredits}, the ledger ${t.charged} and ${t.refunded}`);
    }
  } else if (t.charges + t.refunds > 0) {
    found.push(`${t.charges} charge and ${t.refunds} refund entries on an open (${t.status}) task`);
  }
  // Reserve takes the amount off the balance, charge leaves it, refund gives it back.
  if (t.deltaSum !== t.refunded - t.reserved) found.push(`its entries move the balance by ${t.deltaSum}, expected ${t.refunded - t.reserved}`);
  return found;
}

function userViolations(u: UserLedger): string[] {
  const found: string[] = [];
  if (u.credits !== u.deltaSum) found.push(`credits ${u.credits} != ledger sum ${u.deltaSum}`);
  if (u.taskless > 0) found.push(`${u.taskless} reserve/charge/refund entries name no task`);
  return found;
}
