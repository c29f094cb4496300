// Fault: SIGKILL of the only worker while 20 webhook POSTs wait for the receiver's answer, at the
// DEFAULT lock and stalled-check settings (JOB_LOCK_MS, WEBHOOK_TIMEOUT_MS, RECONCILE_INTERVAL_MS
// as shipped); a replacement worker starts at once. Measures death -> `attempt_lost` recorded ->
// attempt 2 at the receiver (within 15 s of the death). Before it, a POST held longer
// than the delivery lock with the worker alive shows the lock is renewed: one POST, no attempt_lost.
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { failWithAppOutput, startFaultStack, type FaultStack } from "./support/fault-stack.ts";
import { describeWithReceiver, startHookReceiver, type HookReceiver } from "./support/hook-receiver.ts";
import { submitMany, until } from "./support/load.ts";
import { countRows, findRow, findRows } from "../support/db-rows.ts";

const IN_FLIGHT = 20;
// The delivery lock is 5 s; this hold is longer, and shorter than the 10 s webhook timeout.
const LIVE_HOLD_MS = 8_000;
const DEAD_HOLD_MS = 30_000;
const REQUIRED_MS = 15_000;

let database: ScratchDatabase | undefined;
let receiver: HookReceiver | undefined;
let stack: FaultStack | undefined;
const fail = (error: unknown): never => failWithAppOutput(stack, error);

describeWithReceiver("a dead worker's attempt is found quickly at default settings", () => {
  beforeAll(async () => {
    receiver = await startHookReceiver(({ nth, path }) => {
      if (nth > 0) return { status: 200 };
      if (path.endsWith("&live=1")) return { status: 200, delayMs: LIVE_HOLD_MS };
      return { status: 200, delayMs: DEAD_HOLD_MS };
    });
    database = await createScratchDatabase();
    stack = await startFaultStack({
      databaseUrl: database.url,
      redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      // Defaults for everything that decides detection; a short retry delay only so that attempt 2
      // follows at once (FINAL must be >= RETRY + 2 x TIMEOUT).
      env: {
        ...receiver.childEnv,
        WEBHOOK_HOST_CONCURRENCY: "64",
        JOB_LOCK_MS: "30000",
        WEBHOOK_TIMEOUT_MS: "10000",
        RECONCILE_INTERVAL_MS: "15000",
        WEBHOOK_RETRY_DELAY_MS: "1000",
        WEBHOOK_FINAL_ATTEMPT_MS: "60000",
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
    await database?.drop();
  });

  test("a POST held longer than the lock by a live worker is one attempt, not attempt_lost", async () => {
    const { auth } = await stack!.user();
    const [taskId] = await submitMany(stack!, auth, 1, () => ({ model: "sim-detect-1", text: "live", webhook_url: `${receiver!.url}&live=1` }));
    await until(async () => (await findRow(stack!.db, "webhook_deliveries", { taskId: taskId! }))?.status === "delivered", 30_000, "delivered").catch(fail);
    const attempts = await findRows(stack!.db, "webhook_attempts", { taskId: taskId! });
    expect(attempts.map((a) => a.outcome)).toEqual(["delivered"]);
    expect(receiver!.posts.get(taskId!)).toHaveLength(1);
  }, 60_000);

  test("death -> attempt_lost -> attempt 2 within 15 s", async () => {
    const { db } = stack!;
    const { auth } = await stack!.user();
    const ids = await submitMany(stack!, auth, IN_FLIGHT, (i) => ({ model: "sim-detect-1", text: `held ${i}`, webhook_url: receiver!.url }));
    await until(async () => ids.every((id) => receiver!.posts.get(id)?.length === 1), 30_000, `${IN_FLIGHT} POSTs in flight`).catch(fail);

    const killedAt = Date.now();
    await stack!.workers[0]!.kill("SIGKILL");
    await stack!.startWorker();
    await until(async () => ids.every((id) => (receiver!.posts.get(id)?.length ?? 0) >= 2), 60_000, "attempt 2 of every task").catch(fail);

    const lost = await findRows(db, "webhook_attempts", { taskId: ids, attemptNo: 1 });
    expect(lost.map((a) => a.outcome)).toEqual(ids.map(() => "attempt_lost"));
    const lostMs = lost.map((a) => a.finishedAt!.getTime() - killedAt);
    const secondMs = ids.map((id) => receiver!.posts.get(id)![1]!.at - killedAt);
    const worstLost = Math.max(...lostMs);
    const worstSecond = Math.max(...secondMs);
    process.stdout.write(
      `worker death at default settings (${IN_FLIGHT} POSTs in flight): death -> attempt_lost recorded ${(Math.min(...lostMs) / 1000).toFixed(1)}-${(worstLost / 1000).toFixed(1)} s, ` +
        `-> attempt 2 at the receiver ${(Math.min(...secondMs) / 1000).toFixed(1)}-${(worstSecond / 1000).toFixed(1)} s (retry delay 1 s; required: lost and next scheduled within ${REQUIRED_MS / 1000} s)\n`,
    );
    expect(worstLost).toBeLessThan(REQUIRED_MS);
    await until(async () => (await countRows(db, "webhook_deliveries", { taskId: ids, status: "delivered" })) === IN_FLIGHT, 30_000, "all delivered").catch(
      fail,
    );
  }, 150_000);
});
