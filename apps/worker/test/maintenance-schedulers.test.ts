import { createLogger } from "@gen/logger";
import { MAINTENANCE_JOBS, QUEUE_NAMES, createQueue, createRedis, scheduleMaintenance, type MaintenanceJobData, type MaintenanceJobName } from "@gen/queues";
import { createMaintenanceWorker, type MaintenanceWorker } from "../src/maintenance/create-maintenance-worker.ts";
import { deletePrefixAt } from "../../../test/support/redis-keys.ts";
import { testPrefix } from "../../../test/support/run-scope.ts";

const prefix = testPrefix("test");
const EVERY_MS = 250;
const NAMES = Object.values(MAINTENANCE_JOBS);
const logger = createLogger("worker-test", "silent");
const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
  await deletePrefixAt("redis://127.0.0.1:6379", prefix);
});

interface Run {
  instance: number;
  name: MaintenanceJobName;
}

/** One worker process's maintenance, with connections of its own, recording each run. */
async function instance(n: number, runs: Run[]): Promise<MaintenanceWorker> {
  const connection = createRedis("redis://127.0.0.1:6379", "blocking");
  const queue = createQueue<MaintenanceJobData>(QUEUE_NAMES.maintenance, connection, prefix);
  const record = (name: MaintenanceJobName) => async () => {
    runs.push({ instance: n, name });
  };
  const maintenance = await createMaintenanceWorker({
    queue,
    connection,
    prefix,
    intervals: Object.fromEntries(NAMES.map((name) => [name, EVERY_MS])) as Record<MaintenanceJobName, number>,
    runs: Object.fromEntries(NAMES.map((name) => [name, record(name)])) as Record<MaintenanceJobName, () => Promise<void>>,
    logger,
  });
  cleanup.push(async () => {
    await maintenance.close();
    await queue.close();
    connection.disconnect();
  });
  return maintenance;
}

test("two workers run each periodic job once per interval between them, not once each", async () => {
  const runs: Run[] = [];
  const first = await instance(1, runs);
  const second = await instance(2, runs);
  const startedAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const elapsed = Date.now() - startedAt;
  await Promise.all([first.worker.pause(), second.worker.pause()]);

  const connection = createRedis("redis://127.0.0.1:6379", "blocking");
  const queue = createQueue<MaintenanceJobData>(QUEUE_NAMES.maintenance, connection, prefix);
  const done = await queue.getJobs(["completed"], 0, 1000);
  const schedulers = await queue.getJobSchedulers();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();

  // One scheduler per job however many workers upserted it.
  expect(schedulers.map((s) => s.key).sort()).toEqual([...NAMES].sort());
  for (const name of NAMES) {
    const ofName = done.filter((job) => job.name === name);
    // Each run is its interval's job: no due time twice, so no interval ran on both workers.
    const ids = ofName.map((job) => job.id);
    expect(new Set(ids).size).toBe(ids.length);
    // At most one run per interval elapsed (plus the one due at start), where a timer in each
    // worker would have made two.
    expect(ofName.length).toBeGreaterThanOrEqual(2);
    expect(ofName.length).toBeLessThanOrEqual(Math.ceil(elapsed / EVERY_MS) + 1);
  }
  expect(runs.length).toBe(done.length);
}, 20_000);

test("a job on the maintenance queue that names no periodic job runs nothing", async () => {
  const runs: Run[] = [];
  const maintenance = await instance(3, runs);
  await maintenance.worker.pause();
  const connection = createRedis("redis://127.0.0.1:6379", "blocking");
  const queue = createQueue<MaintenanceJobData>(QUEUE_NAMES.maintenance, connection, prefix);
  // Its schedulers and their runs go; only the stray job is left. A run that was finishing while
  // the queue was emptied can still add its scheduler's next job (on a loaded machine it did), so
  // the queue is emptied until it stays empty.
  for (let quiet = 0; quiet < 2;) {
    await queue.obliterate({ force: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const counts = Object.values(await queue.getJobCounts()).reduce((sum, n) => sum + n, 0);
    quiet = counts === 0 && (await queue.getJobSchedulersCount()) === 0 ? quiet + 1 : 0;
  }
  runs.length = 0;
  const job = await queue.add("drop-tables", {} as MaintenanceJobData);
  maintenance.worker.resume();
  for (let i = 0; i < 100 && !(await job.isCompleted()); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await job.isCompleted()).toBe(true);
  expect(runs).toEqual([]);
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
}, 20_000);

test("a periodic job left out of the intervals (retention not set) is not scheduled, and its scheduler from an earlier start goes", async () => {
  const connection = createRedis("redis://127.0.0.1:6379", "blocking");
  const ownPrefix = `${prefix}_retention`;
  const queue = createQueue<MaintenanceJobData>(QUEUE_NAMES.maintenance, connection, ownPrefix);
  try {
    await scheduleMaintenance(queue, Object.fromEntries(NAMES.map((name) => [name, 60_000])));
    expect((await queue.getJobSchedulers()).map((s) => s.key).sort()).toEqual([...NAMES].sort());
    const without = NAMES.filter((name) => name !== MAINTENANCE_JOBS.purgeFinishedTasks && name !== MAINTENANCE_JOBS.removeExpiredMedia);
    await scheduleMaintenance(queue, Object.fromEntries(without.map((name) => [name, 60_000])));
    expect((await queue.getJobSchedulers()).map((s) => s.key).sort()).toEqual([...without].sort());
  } finally {
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
  }
});
