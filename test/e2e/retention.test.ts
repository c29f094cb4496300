import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import path from "node:path";
import { findExpiredTasks, readTaskLedgers } from "@gen/db";
import { newTaskId } from "@gen/ids";
import { checkLedger, compensateSubmission, reserveTask, settleTask } from "@gen/ledger";
import { createStorage, type Storage } from "@gen/storage";
import { purgeFinishedTasks, type PurgeBatch } from "../../apps/worker/src/maintenance/purge-finished-tasks.ts";
import { removeExpiredMedia } from "../../apps/worker/src/maintenance/remove-expired-media.ts";
import { startStack, type Stack } from "./stack.ts";

// Task and media retention against the real service: tasks made by the gateway and the worker
// (media in a local storage directory of the stack's own), aged in SQL, purged by the maintenance
// steps, then read back through the gateway's HTTP API and the ledger check.

let stack: Stack;
let user: { userId: string; auth: string };
let storage: Storage;

beforeAll(async () => {
  stack = await startStack();
  storage = createStorage(stack.config);
  user = await stack.user();
});
afterAll(() => stack.close());
afterEach(async () => expect(await checkLedger(stack.gateway.db)).toEqual([]));

const db = () => stack.gateway.db;
const storageDir = () => stack.config.storage.dir;
const mediaExists = (taskId: string) => existsSync(path.join(storageDir(), "tasks", taskId));

/** Moves a task's (and its idempotency key's) clock back by `days`, as if it had run that long ago. */
async function age(taskIds: string[], days: number): Promise<void> {
  const shift = `${days} days`;
  await db().$sql.query(
    `UPDATE tasks SET created_at = created_at - $2::interval, updated_at = updated_at - $2::interval,
       started_at = started_at - $2::interval, finished_at = finished_at - $2::interval WHERE id = ANY($1)`,
    [taskIds, shift],
  );
  await db().$sql.query(`UPDATE idempotency_keys SET created_at = created_at - $2::interval WHERE task_id = ANY($1)`, [taskIds, shift]);
}

/** A webhook delivery with its attempts, finished or still waiting (no receiver needed). */
async function addWebhook(taskId: string, status: "delivered" | "pending"): Promise<void> {
  await db().$sql.query(`INSERT INTO webhook_deliveries (task_id, url, status, attempts) VALUES ($1, 'https://hooks.example.test/h', $2, $3)`, [
    taskId,
    status,
    status === "delivered" ? 2 : 0,
  ]);
  if (status === "delivered") {
    await db().$sql.query(
      `INSERT INTO webhook_attempts (id, task_id, attempt_no, started_at, finished_at, outcome, response_status)
       VALUES ($2 || '-1', $1, 1, now(), now(), 'http_500', 500), ($2 || '-2', $1, 2, now(), now(), 'delivered', 200)`,
      [taskId, `whd_${taskId.slice(5, 29)}`],
    );
  }
}

async function submitImage(key?: string): Promise<string> {
  const res = await fetch(`${stack.baseUrl}/api/v1/images/generations`, {
    method: "POST",
    headers: { Authorization: user.auth, "Content-Type": "application/json", ...(key ? { "Idempotency-Key": key } : {}) },
    body: JSON.stringify({ model: "sim-image-1", prompt: "a lighthouse", n: 2, size: "256x256" }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

async function rowCounts(taskIds: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const tables: Array<[string, string]> = [
    ["tasks", "id"],
    ["webhook_deliveries", "task_id"],
    ["webhook_attempts", "task_id"],
    ["ledger_entries", "task_id"],
    ["idempotency_keys", "task_id"],
  ];
  for (const [table, column] of tables) {
    const { rows } = await db().$sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = ANY($1)`, [taskIds]);
    counts[table] = rows[0]!.n;
  }
  return counts;
}

const credits = async () => (await stack.get(user.auth, "/api/v1/account")).body.credits as number;

/** Old finished detect tasks written through the ledger as the gateway and worker do, without running them. */
async function finishedTasks(count: number, charge = 1): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await reserveTask(db(), {
      id: newTaskId(),
      userId: user.userId,
      endpoint: "detect",
      model: "sim-detect-1",
      input: { text: `text ${i}` },
      webhookUrl: null,
      requestId: `req_retention${i}`,
      billingMethod: "flat",
      price: 2,
    });
    if (!("task" in created)) throw new Error("not reserved");
    await settleTask(db(), created.task, { status: "completed", output: { ai_probability: 0.5 }, charge });
    ids.push(created.task.id);
  }
  return ids;
}

describe("TASK_RETENTION_DAYS", () => {
  test("removes finished tasks past the retention with everything naming them; recent, open and waiting ones stay; balance and ledger hold", async () => {
    // Before the worker runs: a submission undone by 60002 (discarded, closed) and one still queued.
    const discarded = await submitImage();
    expect(await compensateSubmission(db(), discarded)).toEqual({ compensated: true });
    const queued = (await reserveTask(db(), {
      id: newTaskId(),
      userId: user.userId,
      endpoint: "detect",
      model: "sim-detect-1",
      input: { text: "never enqueued" },
      webhookUrl: null,
      requestId: "req_queued",
      billingMethod: "flat",
      price: 1,
    })) as { task: { id: string } };
    stack.startWorker();
    const keyed = await submitImage("order-1");
    const hooked = await submitImage();
    const waiting = await submitImage();
    const recent = await submitImage();
    const failed = (await stack.submit(user.auth, "/api/v1/detect", { model: "sim-detect-1", text: "x [[sim:fail=80003]]" })).body.id as string;
    for (const id of [keyed, hooked, waiting, recent, failed]) await stack.waitTerminal(user.auth, id);
    await addWebhook(hooked, "delivered");
    await addWebhook(waiting, "pending");
    for (const id of [keyed, hooked, waiting, recent]) expect(mediaExists(id)).toBe(true);
    await age([discarded, queued.task.id, keyed, hooked, waiting, failed], 31);
    const balance = await credits();
    const removed = [discarded, keyed, hooked, failed];
    const kept = [queued.task.id, waiting, recent];
    const before = await rowCounts(removed);
    expect(before.webhook_attempts).toBe(2);
    expect(before.idempotency_keys).toBe(1);

    const purged = await purgeFinishedTasks({ db: db(), storage, retention: { taskDays: 30, archive: "storage" } });

    expect(purged.tasks).toBe(removed.length);
    expect(purged.dependents).toBe(1 + 2 + 1);
    expect(await rowCounts(removed)).toEqual({ tasks: 0, webhook_deliveries: 0, webhook_attempts: 0, ledger_entries: 0, idempotency_keys: 0 });
    for (const id of [keyed, hooked]) expect(mediaExists(id)).toBe(false);
    for (const id of kept) expect((await rowCounts([id])).tasks).toBe(1);
    expect(mediaExists(waiting)).toBe(true);
    expect(mediaExists(recent)).toBe(true);

    // Through the gateway: a removed task is unknown (404/40001), its media too; the balance did not move.
    for (const id of removed) {
      const poll = await stack.get(user.auth, `/api/v1/tasks/${id}`);
      expect(poll.status).toBe(404);
      expect(poll.body.error.code).toBe(40001);
    }
    expect((await fetch(`${stack.baseUrl}/cdn/tasks/${keyed}/0.png`)).status).toBe(404);
    expect((await stack.get(user.auth, `/api/v1/tasks/${recent}`)).status).toBe(200);
    expect(await credits()).toBe(balance);
    // One carry-forward for the user, the sum of what was removed: the charges of the removed tasks.
    const carried = await db().$sql.query<{ amount: number; delta: number; task_id: string | null }>(
      `SELECT amount, delta, task_id FROM ledger_entries WHERE user_id = $1 AND kind = 'carry_forward'`,
      [user.userId],
    );
    expect(carried.rows).toHaveLength(1);
    expect(carried.rows[0]!.task_id).toBeNull();
    expect(carried.rows[0]!.delta).toBeLessThan(0);
    expect(carried.rows[0]!.amount).toBe(-carried.rows[0]!.delta);
    expect(await checkLedger(db(), { userId: user.userId })).toEqual([]);
    // The operator's command, as documented, on the whole database: silent, exit 0.
    const check = await promisify(execFile)("pnpm", ["admin", "ledger-check"], { env: { ...process.env, DATABASE_URL: stack.env.DATABASE_URL } });
    expect(check.stdout).toBe("");

    // The archive: one line per removed task, with what named it, under the day it finished.
    expect(purged.archiveKeys.length).toBeGreaterThanOrEqual(1);
    const lines = purged.archiveKeys.flatMap((key) =>
      readFileSync(path.join(storageDir(), key), "utf8")
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, any>),
    );
    expect(lines.map((line) => line.id).sort()).toEqual([...removed].sort());
    const day = new Date(Date.now() - 31 * 86_400_000).toISOString().slice(0, 10);
    expect(purged.archiveKeys.every((key) => /^archive\/tasks\/\d{4}-\d{2}-\d{2}\/[^/]+\.jsonl$/.test(key))).toBe(true);
    expect(purged.archiveKeys.some((key) => key.startsWith(`archive/tasks/${day}/`))).toBe(true);
    const hookedLine = lines.find((line) => line.id === hooked)!;
    expect(hookedLine.webhook_delivery.status).toBe("delivered");
    expect(hookedLine.webhook_attempts.map((a: { attempt_no: number }) => a.attempt_no)).toEqual([1, 2]);
    expect(hookedLine.ledger_entries.map((e: { kind: string }) => e.kind).sort()).toEqual(["charge", "refund", "reserve"]);
    expect(lines.find((line) => line.id === discarded)!.discarded_at).not.toBeNull();
    // The archive shares the storage directory but is never served.
    expect((await fetch(`${stack.baseUrl}/cdn/${purged.archiveKeys[0]}`)).status).toBe(404);

    // The key is gone with its task: the same Idempotency-Key now starts a new task.
    const again = await submitImage("order-1");
    expect(again).not.toBe(keyed);
    await stack.waitTerminal(user.auth, again);
    // A second run finds nothing more.
    expect((await purgeFinishedTasks({ db: db(), storage, retention: { taskDays: 30, archive: "off" } })).tasks).toBe(0);
  }, 60_000);

  test("works in bounded batches: batchSize tasks per statement, maxBatches per run, the rest on the next run", async () => {
    const ids = await finishedTasks(5);
    await age(ids, 40);
    const batches: PurgeBatch[] = [];
    const first = await purgeFinishedTasks(
      { db: db(), storage, retention: { taskDays: 30, archive: "off" } },
      { batchSize: 2, maxBatches: 2, onBatch: (b) => batches.push(b) },
    );
    expect(batches.map((b) => b.tasks)).toEqual([2, 2]);
    // One carry-forward row per user, whatever the number of batches: each replaces the last.
    expect(batches.map((b) => b.carried)).toEqual([1, 1]);
    expect(first.tasks).toBe(4);
    expect((await rowCounts(ids)).tasks).toBe(1);
    expect((await purgeFinishedTasks({ db: db(), storage, retention: { taskDays: 30, archive: "off" } }, { batchSize: 2 })).tasks).toBe(1);
    expect((await rowCounts(ids)).tasks).toBe(0);
  });

  test("one run's batches go on from where the last stopped, also past tasks that finished at the same instant", async () => {
    const ids = await finishedTasks(5);
    await db().$sql.query(`UPDATE tasks SET updated_at = now() - interval '40 days' WHERE id = ANY($1)`, [ids]);
    const batches: PurgeBatch[] = [];
    const run = await purgeFinishedTasks(
      { db: db(), storage, retention: { taskDays: 30, archive: "off" } },
      { batchSize: 2, maxBatches: 5, onBatch: (b) => batches.push(b) },
    );
    expect(batches.map((b) => b.tasks)).toEqual([2, 2, 1]);
    expect(run.tasks).toBe(5);
    expect((await rowCounts(ids)).tasks).toBe(0);
  });

  test("a failed archive write removes nothing: rows, ledger and media stay for the next run", async () => {
    const ids = await finishedTasks(3);
    await age(ids, 40);
    const failing: Storage = {
      ...storage,
      putArchive: async () => {
        throw new Error("archive bucket unavailable");
      },
    };
    await expect(purgeFinishedTasks({ db: db(), storage: failing, retention: { taskDays: 30, archive: "storage" } })).rejects.toThrow(
      "archive bucket unavailable",
    );
    expect(await rowCounts(ids)).toMatchObject({ tasks: 3, ledger_entries: 9 });
    const retried = await purgeFinishedTasks({ db: db(), storage, retention: { taskDays: 30, archive: "storage" } });
    expect(retried.tasks).toBe(3);
    expect(await rowCounts(ids)).toMatchObject({ tasks: 0, ledger_entries: 0 });
  });

  test("several runs at once remove and carry forward each task once", async () => {
    const ids = await finishedTasks(30, 2);
    await age(ids, 40);
    const balance = await credits();
    const deps = { db: db(), storage, retention: { taskDays: 30, archive: "storage" as const } };
    const runs = await Promise.all([1, 2, 3].map(() => purgeFinishedTasks(deps, { batchSize: 7, maxBatches: 10 })));
    expect(runs.reduce((sum, run) => sum + run.tasks, 0)).toBe(30);
    expect((await rowCounts(ids)).tasks).toBe(0);
    expect(await credits()).toBe(balance);
    expect(await checkLedger(db(), { userId: user.userId })).toEqual([]);
    expect(await readTaskLedgers(db(), { userId: user.userId, after: "", limit: 100 })).not.toContainEqual(expect.objectContaining({ taskId: ids[0] }));
    expect(await findExpiredTasks(db(), { cutoff: new Date(Date.now() - 30 * 86_400_000), limit: 10 })).toEqual([]);
    // A last run gathers whatever carry-forward rows the concurrent ones left into one.
    const single = await finishedTasks(1, 2);
    await age(single, 40);
    await purgeFinishedTasks(deps);
    const carryRows = await db().$sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_entries WHERE user_id = $1 AND kind = 'carry_forward'`, [
      user.userId,
    ]);
    expect(carryRows.rows[0]!.n).toBe(1);
  });
});

describe("MEDIA_RETENTION_DAYS", () => {
  test("removes only the media of tasks past it: the task still polls, its output URLs answer 404; each task once", async () => {
    const old = await submitImage();
    const recent = await submitImage();
    for (const id of [old, recent]) await stack.waitTerminal(user.auth, id);
    await age([old], 8);
    const removed = await removeExpiredMedia({ db: db(), storage, retention: { mediaDays: 7 } });
    expect(removed).toBeGreaterThanOrEqual(1);
    expect(mediaExists(old)).toBe(false);
    expect(mediaExists(recent)).toBe(true);
    const poll = await stack.get(user.auth, `/api/v1/tasks/${old}`);
    expect(poll.status).toBe(200);
    expect(poll.body.status).toBe("completed");
    const url = poll.body.output.image_urls[0] as string;
    expect((await fetch(url)).status).toBe(404);
    // The mark moved past it: the next run has nothing to do.
    expect(await removeExpiredMedia({ db: db(), storage, retention: { mediaDays: 7 } })).toBe(0);
    const marks = await db().$sql.query<{ name: string }>(`SELECT name FROM maintenance_marks`);
    expect(marks.rows.map((m) => m.name)).toContain("media-retention-completed");
  }, 30_000);
});
