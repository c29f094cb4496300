import { Worker, type Queue } from "bullmq";
import type { Logger } from "@gen/logger";
import { QUEUE_NAMES, scheduleMaintenance, type MaintenanceJobData, type MaintenanceJobName, type RedisClient } from "@gen/queues";

// How many of the longest interval a chain of periodic jobs broken by a failover can stay broken.
const KEEP_ALIVE_INTERVALS = 3;

/** What each periodic job does; a run that throws is logged, and the next interval runs again. */
type MaintenanceRuns = Partial<Record<MaintenanceJobName, () => Promise<void>>>;

export interface MaintenanceOptions {
  queue: Queue<MaintenanceJobData>;
  /** Shared with `queue`; its reconnects re-create the schedulers (Redis may come back empty). */
  connection: RedisClient;
  prefix: string;
  /** A job left out is not scheduled (and its scheduler is removed). */
  intervals: Partial<Record<MaintenanceJobName, number>>;
  runs: MaintenanceRuns;
  logger: Logger;
}

export interface MaintenanceWorker {
  worker: Worker<MaintenanceJobData>;
  close(): Promise<void>;
}

/**
 * The fleet's periodic work as BullMQ job schedulers instead of a timer in every worker: each
 * interval's run is one job, taken by one worker of the fleet. Each kind has a slot of its own, so
 * a long delivery reconcile does not hold back the task reconcile.
 */
export async function createMaintenanceWorker(options: MaintenanceOptions): Promise<MaintenanceWorker> {
  const { queue, connection, intervals, runs, logger } = options;
  const schedule = () => scheduleMaintenance(queue, intervals).catch((error: unknown) => logger.error("scheduling maintenance jobs failed", { err: error }));
  await scheduleMaintenance(queue, intervals);
  // A Redis that restarted without persistence has lost the schedulers with everything else.
  connection.on("ready", schedule);
  // A failover can lose them without any reconnect: a promoted replica that missed the scheduler's
  // next job has a scheduler that never fires again (no 'ready' is seen on a cluster whose slot
  // moved), and then nothing repairs lost delivery jobs. Upserting is idempotent (the next run
  // keeps its time), so every worker re-asserts the schedulers every few intervals.
  const keepAlive = setInterval(schedule, KEEP_ALIVE_INTERVALS * Math.max(...Object.values(intervals).filter((every) => every !== undefined))).unref();
  const worker = new Worker<MaintenanceJobData>(
    QUEUE_NAMES.maintenance,
    async (job) => {
      const run = runs[job.name as MaintenanceJobName];
      if (run) await run();
    },
    { connection, prefix: options.prefix, concurrency: Object.keys(runs).length },
  );
  worker.on("failed", (job, error) => logger.error("maintenance run failed", { job: job?.name, err: error }));
  worker.on("error", (error) => logger.error("maintenance worker error", { err: error }));
  return {
    worker,
    async close() {
      connection.off("ready", schedule);
      clearInterval(keepAlive);
      await worker.close();
    },
  };
}
