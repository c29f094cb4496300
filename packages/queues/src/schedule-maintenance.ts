import type { Queue } from "bullmq";
import { MAINTENANCE_JOB_OPTIONS } from "./job-options.ts";
import { MAINTENANCE_JOBS, type MaintenanceJobData, type MaintenanceJobName } from "./job-types.ts";

/**
 * Makes each periodic job a BullMQ job scheduler that fires every `intervals[name]` ms. Every
 * worker calls this at start (and after Redis came back empty): an upsert with the same interval
 * keeps the scheduler's pending run, and a run's job id is the scheduler id plus its due time, so
 * the fleet gets one run per interval, not one per worker. A job without an interval (retention
 * not configured) has its scheduler removed, so turning it off takes effect when a worker with the
 * new setting starts, as changing an interval does.
 */
export async function scheduleMaintenance(queue: Queue<MaintenanceJobData>, intervals: Partial<Record<MaintenanceJobName, number>>): Promise<void> {
  for (const name of Object.values(MAINTENANCE_JOBS)) {
    const every = intervals[name];
    if (every === undefined) await queue.removeJobScheduler(name);
    else await queue.upsertJobScheduler(name, { every }, { name, data: {}, opts: MAINTENANCE_JOB_OPTIONS });
  }
}
