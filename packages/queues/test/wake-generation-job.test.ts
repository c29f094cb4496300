import { randomBytes } from "node:crypto";
import {
  QUEUE_NAMES,
  clearUpstreamCallback,
  createQueue,
  createRedis,
  enqueueGenerationJobs,
  signalUpstreamCallback,
  takeUpstreamCallback,
  wakeGenerationJob,
  type GenerationJobData,
} from "../src/index.ts";
import { GENERATION_JOB_OPTIONS } from "../src/job-options.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = createRedis(REDIS_URL, "blocking");
const prefix = `test_wake_${randomBytes(4).toString("hex")}`;
const queue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, redis, prefix);
const taskId = () => `task_${randomBytes(16).toString("hex")}`;

afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

test("a parked job is made to run now; a waiting, missing or twice-woken one is left alone", async () => {
  const parked = taskId();
  await queue.add("generate", { taskId: parked }, { ...GENERATION_JOB_OPTIONS, jobId: parked, delay: 600_000 });
  expect(await queue.getJobState(parked)).toBe("delayed");
  expect(await wakeGenerationJob(queue, parked)).toBe(true);
  expect(await queue.getJobState(parked)).toBe("waiting");
  expect(await wakeGenerationJob(queue, parked)).toBe(false);
  expect(await queue.getJobState(parked)).toBe("waiting");
  expect(await wakeGenerationJob(queue, taskId())).toBe(false);
  const queued = taskId();
  await enqueueGenerationJobs(queue, [queued]);
  expect(await wakeGenerationJob(queue, queued)).toBe(false);
});

test("a callback's mark: cleared before a poll, taken once after a park", async () => {
  const id = taskId();
  // The job is not parked (running): the mark stays for the worker.
  expect(await signalUpstreamCallback(redis, queue, prefix, id)).toBe(false);
  expect(await takeUpstreamCallback(redis, prefix, id)).toBe(true);
  expect(await takeUpstreamCallback(redis, prefix, id)).toBe(false);
  await signalUpstreamCallback(redis, queue, prefix, id);
  await clearUpstreamCallback(redis, prefix, id);
  expect(await takeUpstreamCallback(redis, prefix, id)).toBe(false);
});
