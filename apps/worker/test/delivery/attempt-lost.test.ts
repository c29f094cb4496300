import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { webhookJobId } from "@gen/queues";
import { createDeliveryFixture, hookUrl, type DeliveryFixture } from "./helpers/delivery-fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./helpers/webhook-receiver.ts";

// Long enough to look at the delivery between the loss and attempt 2.
const RETRY_MS = 1_500;
const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../../../..");

let fx: DeliveryFixture;
let receiver: WebhookReceiver;
let child: ChildProcess | undefined;
// The POSTs (by arrival index) that never get an answer.
const hangs = new Set([0]);

beforeAll(async () => {
  // A short lock so that a killed worker's job is handed on within about two seconds.
  fx = await createDeliveryFixture({ timeoutMs: 5_000, retryDelayMs: RETRY_MS, finalAttemptMs: 30_000, jobLockMs: 1_000 });
  // The first POST never gets an answer: the worker is killed while it waits for one.
  receiver = await startWebhookReceiver(fx.cert, (index) => (hangs.has(index) ? "hang" : 200));
});
afterAll(async () => {
  child?.kill("SIGKILL");
  await fx.close();
  await receiver.close();
});

async function startChildWorker(): Promise<ChildProcess> {
  const env = {
    ...process.env,
    DATABASE_URL: fx.config.databaseUrl,
    QUEUE_PREFIX: fx.queuePrefix,
    WEBHOOK_TIMEOUT_MS: String(fx.config.webhookTimeoutMs),
    WEBHOOK_RETRY_DELAY_MS: String(fx.config.webhookRetryDelayMs),
    WEBHOOK_FINAL_ATTEMPT_MS: String(fx.config.webhookFinalAttemptMs),
    RECONCILE_INTERVAL_MS: String(fx.config.reconcileIntervalMs),
    WEBHOOK_ALLOWED_CIDRS: fx.config.webhookAllowedCidrs.join(","),
    JOB_LOCK_MS: String(fx.config.jobLockMs),
    TEST_CA_PEM: fx.ca.cert,
    NODE_OPTIONS: "",
  };
  const started = spawn(process.execPath, ["--conditions=@gen/source", "--import", "tsx", path.join(here, "helpers/crash-worker.ts")], {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  started.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    started.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve());
    started.once("exit", (code) => reject(new Error(`child worker exited (${code}): ${stderr}`)));
  });
  return started;
}

/** SIGKILLs the child, starts a worker here and waits until attempt 1 of the task is recorded. */
async function killChildAndWaitForAttempt1(taskId: string) {
  child!.kill("SIGKILL");
  await once(child!, "exit");
  const killedAt = Date.now();
  fx.startWorker();
  const lost = await fx.waitFor(async () => {
    const [first] = await fx.attempts(taskId);
    return first?.finishedAt != null && first;
  }, 20_000);
  return { killedAt, lost };
}

test("a worker killed mid-attempt: the attempt is recorded attempt_lost, not resent, and attempt 2 follows the schedule", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port) });
  child = await startChildWorker();
  await fx.handOff(taskId);

  // The child has claimed attempt 1 and its POST is at the receiver, unanswered.
  await receiver.waitForRequests(1, 20_000);
  const open = await fx.waitFor(async () => {
    const [first] = await fx.attempts(taskId);
    return first && first;
  });
  expect(open.finishedAt).toBeNull();
  expect(await fx.webhookObject(taskId)).toMatchObject({ status: "in_progress", attempts: 1, last_error: null });

  // A fresh worker: BullMQ hands it the stalled job once the dead worker's lock has expired.
  const { killedAt, lost } = await killChildAndWaitForAttempt1(taskId);
  expect(lost).toMatchObject({ id: open.id, attemptNo: 1, outcome: "attempt_lost", responseStatus: null });
  expect(lost.finishedAt!.getTime()).toBeGreaterThanOrEqual(killedAt);
  expect(lost.durationMs).toBe(lost.finishedAt!.getTime() - open.startedAt.getTime());
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "in_progress",
    attempts: 1,
    response_status: null,
    last_error: "attempt_lost",
    last_attempt_at: open.startedAt.toISOString(),
    delivered_at: null,
  });
  expect((await fx.delivery(taskId)).nextAttemptAt!.getTime()).toBe(lost.finishedAt!.getTime() + RETRY_MS);

  const second = await fx.waitFor(async () => {
    const rows = await fx.attempts(taskId);
    return rows[1]?.finishedAt != null && rows[1];
  }, 20_000);
  // Attempt 1 was not sent again: the second POST is attempt 2, a retry delay after the loss was recorded.
  expect(receiver.arrivals).toHaveLength(2);
  const gap = receiver.arrivals[1]! - lost.finishedAt!.getTime();
  expect(gap).toBeGreaterThanOrEqual(RETRY_MS - 5);
  expect(gap).toBeLessThan(RETRY_MS + 1_500);
  expect(second).toMatchObject({ attemptNo: 2, outcome: "delivered", responseStatus: 200 });
  expect(await fx.webhookObject(taskId)).toEqual({
    status: "delivered",
    attempts: 2,
    response_status: 200,
    last_error: null,
    last_attempt_at: second.startedAt.toISOString(),
    delivered_at: second.finishedAt!.toISOString(),
  });
}, 60_000);

test("a live worker's attempt outlasting its lock's duration is never sent twice; killed, it is recorded attempt_lost within about a lock's time", async () => {
  const taskId = await fx.createTask({ url: hookUrl(receiver.port) });
  const arrived = receiver.arrivals.length;
  hangs.add(arrived);
  // The child alone takes the job: the workers the previous test started here are stopped.
  await fx.stopWorkers();
  child = await startChildWorker();
  await fx.handOff(taskId);
  await receiver.waitForRequests(arrived + 1, 20_000);
  const [open] = await fx.attempts(taskId);
  expect(open!.finishedAt).toBeNull();
  // Held twice as long as the lock (1 s here; a stalled check every 0.5 s), with a second worker
  // polling the queue: the live child keeps renewing BullMQ's lock, so the job is never counted
  // stalled and nothing is sent again. (Killed before its 5 s timeout.)
  fx.startWorker();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect(receiver.arrivals).toHaveLength(arrived + 1);
  expect((await fx.attempts(taskId))[0]!.finishedAt).toBeNull();
  expect(await fx.queue.getJobState(webhookJobId(taskId, 1))).toBe("active");

  const { killedAt, lost } = await killChildAndWaitForAttempt1(taskId);
  expect(lost).toMatchObject({ id: open!.id, attemptNo: 1, outcome: "attempt_lost" });
  expect(lost.finishedAt!.getTime() - killedAt).toBeLessThan(5_000);
  const second = await fx.waitFor(async () => {
    const rows = await fx.attempts(taskId);
    return rows[1]?.finishedAt != null && rows[1];
  }, 20_000);
  expect(second).toMatchObject({ attemptNo: 2, outcome: "delivered" });
  // Attempt 1 was not sent again.
  expect(receiver.arrivals).toHaveLength(arrived + 2);
}, 60_000);
