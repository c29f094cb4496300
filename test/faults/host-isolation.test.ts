// Fault: one customer's receiver hangs (accepts the connection and the POST, never answers) while
// 1,000 of its tasks finish, and 200 tasks of a healthy receiver finish at the same time, on two
// real worker processes. Shortened timings (FAULT_TIMINGS: 3 s webhook timeout,
// attempt 3 at 8 s): the hang is a whole timeout per attempt, a healthy POST takes milliseconds.
// Checks: every healthy webhook is delivered on attempt 1, none ends `stale_claim`; the hanging
// receiver never has more than WEBHOOK_HOST_CONCURRENCY POSTs in flight across the fleet. Prints the
// healthy receiver's dispatch latency (task committed terminal -> POST at the receiver), goal p99
// under 1 s, and what became of the hanging receiver's webhooks.
import { Queue } from "bullmq";
import { QUEUE_NAMES, webhookJobId } from "@gen/queues";
import { failWithAppOutput, type FaultStack } from "./support/fault-stack.ts";
import { describeWithReceiver, startHookReceiver, type HookReceiver } from "./support/hook-receiver.ts";
import { attemptOutcomes, healthyDispatch, percentile, startIsolationStage, type IsolationStage } from "./support/isolation.ts";
import { submitMany } from "./support/load.ts";
import { waitSettled } from "./support/no-loss.ts";
import { connectRedis } from "./support/private-redis.ts";
import { sampleCpu } from "../../bench/support/proc-cpu.ts";

const HANGING_TASKS = 1_000;
const HEALTHY_TASKS = 200;
const HOST_CAP = Number(process.env.FAULTS_HOST_CAP ?? 8);
const HANG_MS = 600_000;
// Both customers' tasks are submitted interleaved at 45/s (27 s), within what two workers sharing 2
// cores with the gateway, PostgreSQL and Redis process (about 17 ms of worker CPU per task without
// the hang, 23 ms with it). Sent as fast as the gateway answers (~250/s) the load is above that
// capacity, and the healthy receiver's latency is the same with or without the hang
// (FAULTS_HOST_ISOLATION_CONTROL=1: the "hanging" receiver answers at once): it then measures the
// machine, not the isolation. The hanging host's backlog still grows to its 1,000 attempts (it
// drains 8 per 3 s).
const SUBMIT_RATE = Number(process.env.FAULTS_HOST_ISOLATION_RATE ?? 45);
// A regression guard well above the goal (p99 < 1 s), for a loaded 2-core machine.
const P99_GUARD_MS = 3_000;

let stage: IsolationStage | undefined;
let hanging: HookReceiver | undefined;
let healthy: HookReceiver | undefined;
let stack: FaultStack | undefined;
const fail = (error: unknown): never => failWithAppOutput(stack, error);

// Where a healthy attempt's dispatch time goes: commit -> job added (hand-off), added -> last
// taken by a worker (queue wait), taken -> POST at the receiver (state read, slot, claim, render, send).
async function stages(tasks: { id: string; finishedAt: Date | null }[]): Promise<string> {
  const connection = await connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", 2000);
  const queue = new Queue(QUEUE_NAMES.webhook, { connection, prefix: stack!.env.QUEUE_PREFIX });
  try {
    const rows = { handOff: [] as number[], wait: [] as number[], run: [] as number[] };
    for (const task of tasks) {
      const job = await queue.getJob(webhookJobId(task.id, 1));
      const post = healthy!.posts.get(task.id)?.[0]?.at;
      if (!job || !job.processedOn || post === undefined) continue;
      rows.handOff.push(job.timestamp - task.finishedAt!.getTime());
      rows.wait.push(job.processedOn - job.timestamp);
      rows.run.push(post - job.processedOn);
    }
    const fmt = (values: number[]) => (values.sort((a, b) => a - b), `p50 ${percentile(values, 50)} / p99 ${percentile(values, 99)} ms`);
    return `hand-off ${fmt(rows.handOff)}; queue wait ${fmt(rows.wait)}; run ${fmt(rows.run)} (${rows.run.length} jobs)`;
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

// How many times workers took the hanging receiver's attempts off the queue (attempts 1-3): what
// waiting for its cap cost the fleet.
async function queueTurns(taskIds: string[]): Promise<number> {
  const connection = await connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", 2000);
  const queues = [new Queue(QUEUE_NAMES.webhook, { connection, prefix: stack!.env.QUEUE_PREFIX })];
  try {
    let turns = 0;
    for (const queue of queues) {
      for (const taskId of taskIds) {
        for (const attempt of [1, 2, 3]) turns += (await queue.getJob(webhookJobId(taskId, attempt)))?.attemptsStarted ?? 0;
      }
    }
    return turns;
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
    connection.disconnect();
  }
}

// FAULTS_HOST_ISOLATION=0 skips it (a scenario of about two minutes).
const describeIsolation = process.env.FAULTS_HOST_ISOLATION === "0" ? describe.skip : describeWithReceiver;

describeIsolation("a hanging receiver with 1,000 webhooks next to a healthy one with 200", () => {
  beforeAll(async () => {
    // FAULTS_HOST_ISOLATION_CONTROL=1: the "hanging" receiver answers at once, which shows what the
    // same load costs the healthy receiver without any hang (the baseline of the figure below).
    hanging = await startHookReceiver(() => ({ status: 200, delayMs: process.env.FAULTS_HOST_ISOLATION_CONTROL ? 0 : HANG_MS }));
    stage = await startIsolationStage(hanging, { WEBHOOK_HOST_CONCURRENCY: String(HOST_CAP) });
    ({ stack, healthy } = stage);
  });
  afterAll(() => stage?.close());

  test("the healthy receiver keeps its schedule; the hanging one gets at most its cap", async () => {
    const { db } = stack!;
    // Two customers: the hanging receiver's and the healthy one's (a shared balance row would tie them).
    const hangingCustomer = await stack!.user();
    const healthyCustomer = await stack!.user();
    let maxHanging = 0;
    const sampler = setInterval(() => (maxHanging = Math.max(maxHanging, hanging!.inFlight())), 20);
    const started = Date.now();
    const stopCpu = sampleCpu({ workers: () => stack!.workers.flatMap((worker) => (worker.child.pid === undefined ? [] : [worker.child.pid])) });
    const total = HANGING_TASKS + HEALTHY_TASKS;
    // Interleaved: every sixth task is the healthy receiver's, so both finish at the same time.
    const isHealthy = (i: number) => i % (total / HEALTHY_TASKS) === total / HEALTHY_TASKS - 1;
    const ids = await submitMany(
      stack!,
      (i) => (isHealthy(i) ? healthyCustomer.auth : hangingCustomer.auth),
      total,
      (i) => ({
        model: "sim-detect-1",
        text: `task ${i}`,
        webhook_url: isHealthy(i) ? healthy!.url : hanging!.url,
      }),
      undefined,
      SUBMIT_RATE,
    ).catch(fail);
    const healthyIds = ids.filter((_, i) => isHealthy(i));
    const hangingIds = ids.filter((_, i) => !isHealthy(i));
    const submittedMs = Date.now() - started;

    const { latencies, tasks } = await healthyDispatch(stack!, healthy!, healthyIds).catch(fail);
    const healthyOutcomes = await attemptOutcomes(db, healthyIds);
    process.stdout.write(
      `healthy attempts: ${healthyOutcomes.line}; healthy dispatch p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms\n`,
    );
    process.stdout.write(`healthy dispatch by stage: ${await stages(tasks)}\n`);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);

    await waitSettled(db, 240_000).catch(fail);
    clearInterval(sampler);
    const cpuMs = stopCpu().ms.workers!;
    const turns = await queueTurns(hangingIds);
    const hangingOutcomes = await attemptOutcomes(db, hangingIds);
    process.stdout.write(
      `host isolation (${HANGING_TASKS} tasks to a hanging host, ${HEALTHY_TASKS} to a healthy one, 2 workers, cap ${HOST_CAP}/host, submitted in ${(submittedMs / 1000).toFixed(1)} s at up to ${SUBMIT_RATE}/s): ` +
        `healthy dispatch p50 ${p50} ms, p99 ${p99} ms, max ${latencies[latencies.length - 1]} ms (goal p99 < 1000 ms); healthy attempts: ${healthyOutcomes.line}; ` +
        `hanging host: at most ${maxHanging} POSTs in flight, attempts ${hangingOutcomes.line}, ${turns} queue turns; all settled after ${((Date.now() - started) / 1000).toFixed(0)} s; ` +
        `worker CPU ${(cpuMs / 1000).toFixed(1)} s in all, ${(cpuMs / total).toFixed(1)} ms per task (generation and every attempt)\n`,
    );

    expect(healthyOutcomes.rows).toEqual([["delivered", HEALTHY_TASKS]]);
    expect(healthyIds.filter((id) => healthy!.posts.get(id)?.length !== 1)).toEqual([]);
    expect(p99).toBeLessThan(P99_GUARD_MS);
    // Sampled: a POST the sender gave up on may be seen open for a moment after its slot was reused.
    expect(maxHanging).toBeLessThanOrEqual(HOST_CAP + 2);
  }, 420_000);
});
