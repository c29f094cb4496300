import { Worker } from "bullmq";
import { createDatabase, ensureUser } from "@gen/db";
import type { TaskStatus } from "@gen/domain";
import { newTaskId, newUserId } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, QUEUE_NAMES, createQueue, createRedis, type GenerationJobData } from "@gen/queues";
import { createScratchDatabase } from "../../../test/support/scratch-database.ts";
import { reconcileTasks } from "../src/reconcile-tasks.ts";
import { deleteKeysUnder } from "../../../test/support/redis-keys.ts";
import { testPrefix } from "../../../test/support/run-scope.ts";
import { countCalls } from "../../../test/support/count-calls.ts";
import { insertRow, updateRows } from "../../../test/support/db-rows.ts";

// Reconcilers scan whole tables: this file gets a database of its own.
const scratch = await createScratchDatabase();
const db = createDatabase(scratch.url);
const redis = createRedis("redis://127.0.0.1:6379", "blocking");
const queue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, testPrefix("test"));
const userId = newUserId();

beforeAll(async () => {
  await ensureUser(db, userId);
});
afterAll(async () => {
  await queue.close();
  await deleteKeysUnder(redis, queue.opts.prefix!);
  redis.disconnect();
  await db.$disconnect();
  await scratch.drop();
});

async function task(status: TaskStatus, extra: { discardedAt?: Date; ageMs?: number } = {}) {
  const id = newTaskId();
  await insertRow(db, "tasks", {
    id,
    userId,
    endpoint: "images",
    model: "sim-image-1",
    status,
    input: {},
    requestId: "req_x",
    billingMethod: "flat",
    reservedCredits: 1,
    discardedAt: extra.discardedAt,
  });
  // updated_at is the time of the row's last write; age the row directly.
  await db.$sql.query(`UPDATE tasks SET updated_at = now() - ($1 || ' milliseconds')::interval WHERE id = $2`, [String(extra.ageMs ?? 60_000), id]);
  return id;
}

test("enqueues stranded non-terminal tasks once, and nothing else", async () => {
  const stranded = await task("queued");
  const running = await task("in_progress");
  const fresh = await task("queued", { ageMs: 0 });
  const done = await task("completed");
  const hidden = await task("queued", { discardedAt: new Date() });
  const alive = await task("queued");
  await queue.add("generate", { taskId: alive }, { ...GENERATION_JOB_OPTIONS, jobId: alive });

  expect(await reconcileTasks(db, queue, 30_000)).toBe(2);
  for (const id of [stranded, running, alive]) expect((await queue.getJob(id))?.data).toEqual({ taskId: id });
  for (const id of [fresh, done, hidden]) expect(await queue.getJob(id)).toBeUndefined();
  // A second pass finds live jobs for all of them.
  expect(await reconcileTasks(db, queue, 30_000)).toBe(0);
});

test("a job that already failed while its task is not terminal is replaced", async () => {
  await queue.obliterate({ force: true });
  await updateRows(db, "tasks", { userId }, { status: "completed" });
  const id = await task("in_progress");
  await queue.add("generate", { taskId: id }, { jobId: id });
  const connection = redis.duplicate();
  const worker = new Worker(QUEUE_NAMES.generation, null, { connection, prefix: queue.opts.prefix, autorun: false });
  const job = await worker.getNextJob("token-1");
  expect(job?.id).toBe(id);
  await job!.moveToFailed(new Error("exhausted"), "token-1", false);
  expect(await (await queue.getJob(id))!.getState()).toBe("failed");
  expect(await reconcileTasks(db, queue, 30_000)).toBe(1);
  expect(await (await queue.getJob(id))!.getState()).toBe("waiting");
  await worker.close();
  connection.disconnect();
});

test("reads the state of a job only when the queue's live jobs do not list it, across pages of the list", async () => {
  await queue.obliterate({ force: true });
  await updateRows(db, "tasks", { userId }, { status: "completed" });
  const waiting = await task("queued");
  const parked = await task("in_progress");
  const stranded = await task("in_progress");
  await queue.add("generate", { taskId: waiting }, { ...GENERATION_JOB_OPTIONS, jobId: waiting });
  // Listed newest due time first: 5,000 jobs due later put the parked task's job on the second page.
  await queue.addBulk(
    Array.from({ length: 5_000 }, (_, i) => ({ name: "generate", data: { taskId: `other_${i}` }, opts: { jobId: `other_${i}`, delay: 120_000 + i } })),
  );
  await queue.add("generate", { taskId: parked }, { ...GENERATION_JOB_OPTIONS, jobId: parked, delay: 60_000 });
  const stateReads = countCalls(queue, "getJobState");
  try {
    expect(await reconcileTasks(db, queue, 30_000)).toBe(1);
    expect(stateReads.calls).toEqual([[stranded]]);
  } finally {
    stateReads.restore();
  }
  expect(await queue.getJobState(parked)).toBe("delayed");
  expect(await queue.getJobState(stranded)).toBe("waiting");
});
