import type { Queue } from "bullmq";
import { MAINTENANCE_JOB_OPTIONS } from "./job-options.ts";
import type { MaintenanceJobData, MaintenanceJobName } from "./job-types.ts";

/**
 * Makes each periodic job a BullMQ job scheduler that fires every `intervals[name]` ms. Every
 * worker calls this at start (and after Redis came back empty): an upsert with the same interval
 * keeps the scheduler's pending run, and a run's job id is the scheduler id plus its due time, so
 * the fleet gets one run per interval, not one per worker.
 */
export async function scheduleMaintenance(queue: Queue<MaintenanceJobData>, intervals: Record<MaintenanceJobName, number>): Promise<void> {
  for (const [name, every] of Object.entries(intervals) as [MaintenanceJobName, number][]) {
    await queue.upsertJobScheduler(name, { every }, { name, data: {}, opts: MAINTENANCE_JOB_OPTIONS });
  }
}
