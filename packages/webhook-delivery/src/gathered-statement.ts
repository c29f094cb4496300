import { gatherBatches, type Database } from "@gen/db";

// A worker runs up to DELIVERY_CONCURRENCY (64) attempts at once, so the same statement of many of
// them is due in the same event-loop turn: at most 64 per statement, a batch waits for one of two
// in flight for 2 ms at most (the gateway's poll reads use the same limits but 1 ms).
const LIMITS = { maxSize: 64, maxInFlight: 2, maxWaitMs: 2 };

interface Pending<I, O> {
  item: I;
  resolve: (answer: O) => void;
  reject: (error: unknown) => void;
}

/**
 * One of an attempt's statements, gathered per database like the gateway's group commit: calls
 * made together share one statement (`many`, @gen/db's batched form, the only one), each getting
 * its own answer; a lone call is a batch of one. A call only joins a statement sent after it was
 * made, so it sees everything committed before it; every row keeps its own conditions, so a claim or
 * finish decides the same alone or gathered. A failed statement fails every call in it.
 */
export function gatheredStatement<I, O>(many: (db: Database, items: I[]) => Promise<O[]>) {
  const perDatabase = new WeakMap<Database, (pending: Pending<I, O>) => void>();
  const gatherer = (db: Database) =>
    gatherBatches<Pending<I, O>>(LIMITS, async (batch) => {
      try {
        const answers = await many(
          db,
          batch.map((pending) => pending.item),
        );
        batch.forEach((pending, i) => pending.resolve(answers[i] as O));
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    });
  return (db: Database, item: I): Promise<O> => {
    let push = perDatabase.get(db);
    if (!push) perDatabase.set(db, (push = gatherer(db)));
    const gather = push;
    return new Promise<O>((resolve, reject) => gather({ item, resolve, reject }));
  };
}
