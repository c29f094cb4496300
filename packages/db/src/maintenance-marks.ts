import type { Queryable } from "./queryable.ts";
import type { TaskPosition } from "./retention.ts";

// Every statement on `maintenance_marks`: where a periodic job walking the tasks in (updated_at,
// id) order stopped.

/** The mark, or undefined before the job's first run. */
export async function readMark(db: Queryable, name: string): Promise<TaskPosition | undefined> {
  const row = await db.$kysely.selectFrom("maintenance_marks").select(["through_at", "through_id"]).where("name", "=", name).executeTakeFirst();
  return row && { at: row.through_at, id: row.through_id };
}

/**
 * Moves the mark forward to `to`, never back: two runs overlapping may finish out of order, and the
 * later position wins whichever writes last.
 */
export async function advanceMark(db: Queryable, name: string, to: TaskPosition): Promise<void> {
  const now = new Date();
  await db.$kysely
    .insertInto("maintenance_marks")
    .values({ name, through_at: to.at, through_id: to.id, updated_at: now })
    .onConflict((oc) =>
      oc
        .column("name")
        .doUpdateSet({ through_at: to.at, through_id: to.id, updated_at: now })
        .where((eb) =>
          eb.or([
            eb("maintenance_marks.through_at", "<", to.at),
            eb.and([eb("maintenance_marks.through_at", "=", to.at), eb("maintenance_marks.through_id", "<", to.id)]),
          ]),
        ),
    )
    .execute();
}
