// The same-work floor's statements (support/same-work-server.ts, round-trip-cost.ts): the gateway's
// round trips written directly against pg, with its result shape.
import type pg from "pg";
import { newTaskId } from "@gen/ids";

export interface TaskRow {
  id: string;
  status: string;
  model: string;
  createdAt: Date;
  output: unknown;
  reservedCredits: number;
}

/** The key's user, or null for an unknown or revoked key. */
export async function userOfKey(pool: pg.Pool, keyHash: string): Promise<string | null> {
  const { rows } = await pool.query<{ user_id: string; revoked_at: Date | null }>("SELECT user_id, revoked_at FROM api_keys WHERE key_hash = $1", [keyHash]);
  return rows[0] && !rows[0].revoked_at ? rows[0].user_id : null;
}

/** One round trip: the conditional debit gates the task and its reserve row (all or none; null without credits). */
export async function insertTask(pool: pg.Pool, userId: string, model: string, input: object, price: number): Promise<TaskRow | null> {
  const { rows } = await pool.query<TaskRow>(
    `WITH debit AS (UPDATE users SET credits = credits - $3 WHERE id = $2 AND credits >= $3 RETURNING id),
          task AS (INSERT INTO tasks (id, user_id, endpoint, model, status, input, request_id, billing_method, reserved_credits)
                   SELECT $1, $2, 'images', $4, 'queued', $5::jsonb, 'req_bench', 'flat', $3 FROM debit
                   RETURNING id, status, model, created_at AS "createdAt", output, reserved_credits AS "reservedCredits"),
          reserve AS (INSERT INTO ledger_entries (user_id, task_id, kind, amount, delta) SELECT $2, $1, 'reserve', $3, -$3 FROM debit)
     SELECT * FROM task`,
    [newTaskId(), userId, price, model, JSON.stringify(input)],
  );
  return rows[0] ?? null;
}

/** The caller's own visible task, every column (as the gateway's poll reads it). */
export async function readTask(pool: pg.Pool, id: string, userId: string): Promise<TaskRow | null> {
  const { rows } = await pool.query<TaskRow>(
    `SELECT *, created_at AS "createdAt", reserved_credits AS "reservedCredits" FROM tasks WHERE id = $1 AND user_id = $2 AND discarded_at IS NULL`,
    [id, userId],
  );
  return rows[0] ?? null;
}
