// Fault: the Redis server is killed and started again empty (no persistence) while tasks are
// queued, tasks are running upstream and webhooks wait for their retry. Nothing is restarted but
// Redis: the apps reconnect, and the reconcilers rebuild the lost jobs from PostgreSQL.
import { QUEUE_NAMES, createQueue, createRedis, type GenerationJobData } from "@gen/queues";
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { failWithAppOutput, startFaultStack, type FaultStack } from "./support/fault-stack.ts";
import { describeWithReceiver, startHookReceiver, type HookReceiver } from "./support/hook-receiver.ts";
import { submitMany, until } from "./support/load.ts";
import { expectNothingLost, summaryLine, waitSettled } from "./support/no-loss.ts";
import { startPrivateRedis, type PrivateRedis } from "./support/private-redis.ts";
import { countRows, findRow, findRows } from "../support/db-rows.ts";

const CONCURRENCY = 8;

let database: ScratchDatabase | undefined;
let redis: PrivateRedis | undefined;
let receiver: HookReceiver | undefined;
let stack: FaultStack | undefined;
const fail = (error: unknown): never => failWithAppOutput(stack, error);

describeWithReceiver("Redis restarted empty", () => {
  beforeAll(async () => {
    // Tasks of the retry group have their first POST refused, so their delivery waits for attempt 2.
    receiver = await startHookReceiver(({ nth, path }) => ({ status: nth === 0 && path.endsWith("&retry=1") ? 503 : 200 }));
    database = await createScratchDatabase();
    redis = await startPrivateRedis();
    stack = await startFaultStack({
      databaseUrl: database.url,
      redisUrl: redis.url,
      // A retry delay long enough that the retries are still waiting when Redis goes.
      env: { ...receiver.childEnv, WORKER_CONCURRENCY: String(CONCURRENCY), WEBHOOK_RETRY_DELAY_MS: "5000", WEBHOOK_FINAL_ATTEMPT_MS: "15000" },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await redis?.stop();
    await receiver?.close();
    await database?.drop();
  });

  test("queued, running and retry-waiting work all ends, each task settled once, each webhook delivered", async () => {
    const { db } = stack!;
    const { auth } = await stack!.user();
    const hook = (group: string) => `${receiver!.url}&${group}=1`;
    const retrying = await submitMany(stack!, auth, 20, (i) => ({ model: "sim-detect-1", text: `retry ${i}`, webhook_url: hook("retry") }));
    await until(
      async () =>
        (await findRows(db, "webhook_deliveries", { taskId: retrying, status: "in_progress", attempts: 1 })).filter((d) => d.nextAttemptAt !== null).length ===
        20,
      15_000,
      "retries waiting",
    ).catch(fail);
    const running = await submitMany(stack!, auth, CONCURRENCY, (i) => ({
      model: "sim-detect-1",
      text: `running ${i} [[sim:delay_ms=6000]]`,
      webhook_url: hook("running"),
    }));
    await until(
      async () => (await findRows(db, "tasks", { id: running, status: "in_progress" })).filter((t) => t.upstreamId !== null).length === CONCURRENCY,
      15_000,
      "tasks running",
    ).catch(fail);
    // A running task holds no worker slot (its job waits as delayed between polls), so queued work
    // is made by pausing the generation queue: what a busy fleet's backlog looks like.
    const connection = createRedis(redis!.url, "blocking");
    const generationQueue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, connection, stack!.env.QUEUE_PREFIX!);
    await generationQueue.pause();
    await generationQueue.close();
    connection.disconnect();
    const queued = await submitMany(stack!, auth, 30, (i) => ({ model: "sim-detect-1", text: `queued ${i}`, webhook_url: hook("queued") }));
    const state = {
      queued: await countRows(db, "tasks", { id: queued, status: "queued" }),
      running: await countRows(db, "tasks", { id: running, status: "in_progress" }),
      retrying: await countRows(db, "webhook_deliveries", { taskId: retrying, status: "in_progress", attempts: 1 }),
    };
    expect(state).toEqual({ queued: 30, running: CONCURRENCY, retrying: 20 });

    const lostAt = Date.now();
    await redis!.restart();
    await waitSettled(db, 60_000).catch(fail);
    const recoveredMs = Date.now() - lostAt;

    // Both apps serve on the new Redis without a restart: a new task goes all the way.
    const fresh = await submitMany(stack!, auth, 1, () => ({ model: "sim-detect-1", text: "after the restart", webhook_url: hook("fresh") }));
    await until(async () => (await findRow(db, "webhook_deliveries", { taskId: fresh[0]! }))?.status === "delivered", 20_000, "fresh task delivered").catch(
      fail,
    );

    const report = await expectNothingLost(db, receiver!, [...retrying, ...running, ...queued, ...fresh]).catch(fail);
    expect(report).toMatchObject({ tasks: 59, completed: 59, webhooks: 59, delivered: 59 });
    expect(stack!.workers).toHaveLength(1);
    process.stdout.write(
      summaryLine(
        `Redis restarted empty (${state.queued} queued, ${state.running} running, ${state.retrying} webhooks waiting for a retry)`,
        report,
        recoveredMs,
      ),
    );
  }, 150_000);
});
