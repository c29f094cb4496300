// Fault: SIGKILL of the only worker process while 100 tasks run upstream and 100 webhook POSTs
// wait for the receiver's answer; a replacement worker starts at once (a supervisor's restart).
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { failWithAppOutput, startFaultStack, type FaultStack } from "./support/fault-stack.ts";
import { describeWithReceiver, startHookReceiver, type HookReceiver } from "./support/hook-receiver.ts";
import { expectNothingLost, summaryLine, waitSettled } from "./support/no-loss.ts";
import { submitMany, until } from "./support/load.ts";
import { findRows } from "../support/db-rows.ts";

// Long enough that all 200 are in flight together even on a busy machine; the sender waits longer
// than the receiver holds (WEBHOOK_TIMEOUT_MS), so a held POST is in flight, not timed out.
const SLOW_MS = 15_000;
const HOLD_MS = 15_000;

let database: ScratchDatabase | undefined;
let receiver: HookReceiver | undefined;
let stack: FaultStack | undefined;
const fail = (error: unknown): never => failWithAppOutput(stack, error);

describeWithReceiver("worker SIGKILL with 100 tasks and 100 deliveries in flight", () => {
  beforeAll(async () => {
    // The first POST for a task of the held group waits, so it is in flight when the worker dies.
    receiver = await startHookReceiver(({ nth, path }) => (nth === 0 && path.endsWith("&hold=1") ? { status: 200, delayMs: HOLD_MS } : { status: 200 }));
    database = await createScratchDatabase();
    stack = await startFaultStack({
      databaseUrl: database.url,
      redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      env: {
        ...receiver.childEnv,
        WORKER_CONCURRENCY: "150",
        DELIVERY_CONCURRENCY: "150",
        // One host and one customer: both caps above the 100 POSTs held in flight.
        WEBHOOK_HOST_CONCURRENCY: "150",
        WEBHOOK_CUSTOMER_CONCURRENCY: "150",
        WEBHOOK_TIMEOUT_MS: "20000",
        WEBHOOK_FINAL_ATTEMPT_MS: "45000",
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
    await database?.drop();
  });

  test("every task settles once on its first upstream job, every webhook ends, repeats only after attempt_lost", async () => {
    const { db } = stack!;
    const { auth } = await stack!.user();
    const slow = await submitMany(stack!, auth, 100, (i) => ({
      model: "sim-detect-1",
      text: `slow ${i} [[sim:delay_ms=${SLOW_MS}]]`,
      webhook_url: receiver!.url,
    }));
    const running = await until(
      async () => {
        const rows = (await findRows(db, "tasks", { id: slow, status: "in_progress" })).filter((row) => row.upstreamId !== null);
        return rows.length === 100 ? rows : null;
      },
      10_000,
      "100 tasks running",
    ).catch(fail);
    const fast = await submitMany(stack!, auth, 100, (i) => ({ model: "sim-detect-1", text: `fast ${i}`, webhook_url: `${receiver!.url}&hold=1` }));
    await until(async () => receiver!.inFlight() >= 100, 10_000, "100 POSTs in flight").catch(fail);
    const inFlight = receiver!.inFlight();

    const killedAt = Date.now();
    await stack!.workers[0]!.kill("SIGKILL");
    await stack!.startWorker();
    await waitSettled(db, 90_000).catch(fail);
    const recoveredMs = Date.now() - killedAt;

    const report = await expectNothingLost(db, receiver!, [...slow, ...fast]).catch(fail);
    expect(report).toMatchObject({ tasks: 200, completed: 200, webhooks: 200, delivered: 200 });
    // Resumed, not restarted: the upstream job recorded before the crash is the one that finished.
    const after = await findRows(db, "tasks", { id: slow });
    const before = new Map(running.map((row) => [row.id, row.upstreamId]));
    expect(after.filter((row) => row.upstreamId !== before.get(row.id)).map((row) => row.id)).toEqual([]);
    process.stdout.write(summaryLine(`SIGKILL worker (${running.length} tasks running, ${inFlight} POSTs in flight)`, report, recoveredMs));
  }, 150_000);
});
