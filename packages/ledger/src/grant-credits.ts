import { applyUserEntry, type Queryable } from "@gen/db";
import { grantEntry } from "./ledger-entries.ts";

/** Adds credits to a user (the admin CLI): a grant entry and the balance in one statement. Undefined for an unknown user. */
export async function grantCredits(db: Queryable, userId: string, amount: number): Promise<number | undefined> {
  return applyUserEntry(db, userId, grantEntry(amount));
}
