// Bulk load for bench/data-scale.ts: `count` tasks of a running service, in SQL alone
// (INSERT ... SELECT generate_series), with the rows the service would have written beside them.
// The shapes follow what the gateway, the workers and settlement write; the mix is stated in
// DATA_MIX so that bytes per task can be read against it.
import { createHash } from "node:crypto";
import type pg from "pg";

export const DATA_MIX = {
  users: 1000,
  spanDays: 30,
  /** Half images (prompt ~120 characters, one PNG URL out), half detect (text ~600 characters, a score out). */
  imagesShare: 0.5,
  failedShare: 1 / 33,
  webhookShare: 0.5,
  /** Of the webhooks: 5 % needed attempt 2, 1 % all three and failed. */
  secondAttemptShare: 0.05,
  failedDeliveryShare: 0.01,
  /** Of the tasks of the last 48 h (the purge keeps about one day; the rest is a day of backlog). */
  idempotencyKeyShare: 0.2,
};

/** The task id of row i, computable outside the database: the ids are as random as newTaskId()'s. */
export const taskIdOf = (i: number) => `task_${createHash("md5").update(String(i)).digest("hex")}`;
// Rows i with i % users = 0 belong to the measured user (the one with an API key).

/** Tables the load fills; their indexes are dropped during the load and rebuilt after it. */
export const LOADED_TABLES = ["tasks", "webhook_deliveries", "webhook_attempts", "ledger_entries", "idempotency_keys"];

export interface LoadStep {
  what: string;
  ms: number;
  rows: number;
}

/**
 * Loads `count` tasks created over the last spanDays, ending now. The newest max(10, count/10000)
 * are still running (queued or in_progress, their webhooks pending) and the newest finished ones
 * with a webhook waiting for attempt 2 are due in 40 s, so the reconcilers have live rows to
 * tell apart from the history but nothing stranded to repair.
 */
export async function loadData(client: pg.Client, count: number, measuredUserId: string, log: (line: string) => void): Promise<LoadStep[]> {
  const steps: LoadStep[] = [];
  const run = async (what: string, sql: string, values: unknown[] = []) => {
    const started = performance.now();
    const result = await client.query(sql, values);
    const step = { what, ms: performance.now() - started, rows: result.rowCount ?? 0 };
    steps.push(step);
    log(`  ${what}: ${step.rows.toLocaleString("en-US")} rows in ${(step.ms / 1000).toFixed(1)} s`);
  };
  const running = Math.max(10, Math.floor(count / 10_000));
  const m = DATA_MIX;
  await client.query("SET synchronous_commit = off");
  await client.query("SET maintenance_work_mem = '512MB'");
  await client.query("SET statement_timeout = 0");

  // Indexes are rebuilt after the load: one sorted build instead of millions of random inserts.
  const { rows: indexes } = await client.query<{ table: string; name: string; def: string; constraint: string | null }>(
    `SELECT c.relname AS table, i.relname AS name, pg_get_indexdef(i.oid) AS def,
            (SELECT pg_get_constraintdef(k.oid) FROM pg_constraint k WHERE k.conindid = i.oid AND k.conrelid = c.oid) AS constraint
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
      WHERE c.relname = ANY($1)`,
    [LOADED_TABLES],
  );
  for (const index of indexes) {
    await client.query(index.constraint ? `ALTER TABLE "${index.table}" DROP CONSTRAINT "${index.name}"` : `DROP INDEX "${index.name}"`);
  }

  await run(
    "users",
    `INSERT INTO users (id, credits, created_at)
     SELECT 'usr_' || lpad(to_hex(b), 24, '0'), 1000000, now() - interval '90 days' FROM generate_series(1, $1 - 1) b`,
    [m.users],
  );
  // One row per task; i is the row's number, oldest first. $2: measured user, $3: running rows.
  await run(
    "tasks",
    `INSERT INTO tasks (id, user_id, endpoint, model, status, input, output, error_code, error_message, webhook_url, request_id,
                        billing_method, reserved_credits, charged_credits, refunded_credits, created_at, updated_at, started_at, finished_at, upstream_id)
     SELECT 'task_' || md5(i::text),
            CASE WHEN i % ${m.users} = 0 THEN $2 ELSE 'usr_' || lpad(to_hex(i % ${m.users}), 24, '0') END,
            CASE WHEN images THEN 'images' ELSE 'detect' END,
            CASE WHEN images THEN 'sim-image-1' ELSE 'sim-detect-1' END,
            CASE WHEN live THEN (CASE WHEN i % 2 = 0 THEN 'in_progress' ELSE 'queued' END) WHEN failed THEN 'failed' ELSE 'completed' END,
            CASE WHEN images THEN jsonb_build_object('prompt', left(repeat('a watercolour lighthouse at dusk ' || md5(i::text), 3), 120), 'size', '1024x1024', 'n', 1)
                 ELSE jsonb_build_object('text', left(repeat('An essay paragraph to check for generated text, sentence by sentence. ' || md5(i::text), 8), 600)) END,
            CASE WHEN live OR failed THEN NULL
                 WHEN images THEN jsonb_build_object('image_urls', jsonb_build_array('https://cdn.gen.example/outputs/task_' || md5(i::text) || '/0.png'))
                 ELSE jsonb_build_object('ai_probability', round((i % 1000) / 1000.0, 3), 'label', CASE WHEN i % 3 = 0 THEN 'ai' ELSE 'human' END) END,
            CASE WHEN failed AND NOT live THEN 50001 END,
            CASE WHEN failed AND NOT live THEN 'Upstream provider failed' END,
            CASE WHEN hook THEN 'https://hooks.customer-' || (i % ${m.users}) || '.example/gen/callback?token=' || left(md5('t' || i), 16) END,
            'req_' || left(md5('r' || i), 24),
            'flat',
            CASE WHEN images THEN 4 ELSE 1 END,
            CASE WHEN live THEN NULL WHEN failed THEN 0 ELSE CASE WHEN images THEN 4 ELSE 1 END END,
            CASE WHEN failed AND NOT live THEN CASE WHEN images THEN 4 ELSE 1 END END,
            created,
            CASE WHEN live THEN created + interval '1 second' ELSE created + interval '8 seconds' END,
            CASE WHEN i % 2 = 0 OR NOT live THEN created + interval '1 second' END,
            CASE WHEN NOT live THEN created + interval '8 seconds' END,
            CASE WHEN images AND (i % 2 = 0 OR NOT live) THEN 'sim_' || left(md5('u' || i), 24) END
       FROM (SELECT i, i % 2 = 0 AS images, i % 33 = 0 AS failed, i % 4 < 2 AS hook, i > $1 - $3 AS live,
                    now() - (($1 - i) * (${m.spanDays} * 86400.0 / $1)) * interval '1 second' - interval '10 seconds' AS created
               FROM generate_series(1, $1) i) g`,
    [count, measuredUserId, running],
  );
  // Attempt counts: every 20th webhook needed attempt 2, every 100th all three (and failed); the
  // newest 2 x running finished ones of every 20th wait for attempt 2 (in_progress, due in 40 s).
  const deliveryShape = `
       FROM (SELECT i, i > $1 - $2 AS live, i > $1 - 3 * $2 AND i <= $1 - $2 AND i % 20 = 0 AS waiting,
                    CASE WHEN i % 100 = 0 THEN 3 WHEN i % 20 = 0 THEN 2 ELSE 1 END AS tries,
                    now() - (($1 - i) * (${m.spanDays} * 86400.0 / $1)) * interval '1 second' AS finished
               FROM generate_series(1, $1) i WHERE i % 4 < 2) g`;
  await run(
    "webhook_deliveries",
    `INSERT INTO webhook_deliveries (task_id, url, status, attempts, response_status, last_error, last_attempt_at, delivered_at, updated_at, next_attempt_at)
     SELECT 'task_' || md5(i::text),
            'https://hooks.customer-' || (i % ${m.users}) || '.example/gen/callback?token=' || left(md5('t' || i), 16),
            CASE WHEN live THEN 'pending' WHEN waiting THEN 'in_progress' WHEN tries = 3 THEN 'failed' ELSE 'delivered' END,
            CASE WHEN live THEN 0 WHEN waiting THEN 1 ELSE tries END,
            CASE WHEN live THEN NULL WHEN waiting OR tries = 3 THEN 500 ELSE 200 END,
            CASE WHEN NOT live AND (waiting OR tries = 3) THEN 'http_500' END,
            CASE WHEN NOT live THEN finished + (tries - 1) * interval '40 seconds' END,
            CASE WHEN NOT live AND NOT waiting AND tries < 3 THEN finished + (tries - 1) * interval '40 seconds' END,
            CASE WHEN live THEN finished ELSE finished + (tries - 1) * interval '40 seconds' END,
            CASE WHEN waiting THEN now() + interval '40 seconds' END
     ${deliveryShape}`,
    [count, running],
  );
  await run(
    "webhook_attempts",
    `INSERT INTO webhook_attempts (id, task_id, attempt_no, started_at, finished_at, outcome, response_status, duration_ms)
     SELECT 'whd_' || left(md5(i || '-' || k), 24), 'task_' || md5(i::text), k,
            finished + (k - 1) * interval '40 seconds', finished + (k - 1) * interval '40 seconds' + interval '180 milliseconds',
            CASE WHEN k < tries OR tries = 3 OR waiting THEN 'http_500' ELSE 'delivered' END,
            CASE WHEN k < tries OR tries = 3 OR waiting THEN 500 ELSE 200 END, 180
     ${deliveryShape}, generate_series(1, CASE WHEN g.waiting THEN 1 ELSE g.tries END) k
      WHERE NOT live`,
    [count, running],
  );
  // Settlement: a reserve at submission, a charge (and a refund when failed) at the end.
  await run(
    "ledger_entries",
    `INSERT INTO ledger_entries (user_id, task_id, kind, amount, delta, created_at)
     SELECT t.user_id, t.id, e.kind, e.amount, e.delta, e.at
       FROM tasks t, LATERAL (VALUES ('reserve', t.reserved_credits, -t.reserved_credits, t.created_at),
                                     ('charge', t.charged_credits, 0, t.finished_at),
                                     ('refund', t.refunded_credits, t.refunded_credits, t.finished_at)) e(kind, amount, delta, at)
      WHERE e.amount IS NOT NULL AND (e.kind <> 'refund' OR e.amount > 0)`,
  );
  await run(
    "idempotency_keys",
    `INSERT INTO idempotency_keys (user_id, key, request_hash, task_id, created_at)
     SELECT user_id, 'order-' || left(md5('k' || id), 30), encode(sha256(convert_to(id, 'UTF8')), 'hex'), id, created_at
       FROM tasks WHERE created_at > now() - interval '48 hours' AND hashtext(id) % ${Math.round(1 / m.idempotencyKeyShare)} = 0`,
  );
  for (const index of indexes) {
    const started = performance.now();
    await client.query(index.constraint ? `ALTER TABLE "${index.table}" ADD CONSTRAINT "${index.name}" ${index.constraint}` : index.def);
    steps.push({ what: `index ${index.name}`, ms: performance.now() - started, rows: 0 });
  }
  log(`  ${indexes.length} indexes rebuilt in ${(steps.filter((s) => s.what.startsWith("index ")).reduce((sum, s) => sum + s.ms, 0) / 1000).toFixed(1)} s`);
  await run("ANALYZE", "ANALYZE");
  return steps;
}
