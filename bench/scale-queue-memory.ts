// Redis memory per queued generation job: jobs added as the gateway adds them (its job options,
// task ids as job ids) under a QUEUE_PREFIX of their own, used_memory before and after.
import { randomBytes } from "node:crypto";
import { newTaskId } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, QUEUE_NAMES, createQueue, generationJobId, type GenerationJobData } from "@gen/queues";
import type { Figure } from "./support/figure.ts";
import type { ScaleContext } from "./support/scale-context.ts";
import { deleteKeysUnder } from "../test/support/redis-keys.ts";

async function usedMemory(redis: ScaleContext["redis"]): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info("memory"))?.[1] ?? Number.NaN);
}

export async function queueMemory(ctx: ScaleContext): Promise<Figure[]> {
  const count = ctx.quick ? 5_000 : 50_000;
  const prefix = `bench_queue_${randomBytes(4).toString("hex")}`;
  const queue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, ctx.redis, prefix);
  let before: number, after: number, waiting: number;
  try {
    await queue.waitUntilReady();
    before = await usedMemory(ctx.redis);
    for (let i = 0; i < count; i += 5_000) {
      const ids = Array.from({ length: Math.min(5_000, count - i) }, () => newTaskId());
      await queue.addBulk(ids.map((taskId) => ({ name: "generate", data: { taskId }, opts: { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(taskId) } })));
    }
    after = await usedMemory(ctx.redis);
    waiting = await queue.getWaitingCount();
  } finally {
    await queue.close();
    await deleteKeysUnder(ctx.redis, prefix);
  }
  const perJob = (after - before) / count;
  return [
    {
      name: "Redis memory per queued generation job",
      value: perJob,
      unit: "B",
      note: `${waiting} waiting jobs, used_memory +${((after - before) / 1e6).toFixed(1)} MB (shared Redis: other clients' keys move it too)`,
    },
  ];
}
