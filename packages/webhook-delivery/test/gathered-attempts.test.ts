import type { Queue } from "bullmq";
import { createDatabase, listAttempts, ensureUser } from "@gen/db";
import type { DeliveryStatus } from "@gen/domain";
import { newTaskId, newUserId } from "@gen/ids";
import { createLogger } from "@gen/logger";
import type { WebhookJobData } from "@gen/queues";
import { claimAttempt, finishAttempt, loadAttemptDecision, workerFailure, type OpenAttempt } from "@gen/webhook-delivery";
import { findRow, insertRow } from "../../../test/support/db-rows.ts";

// The statements of an attempt through their gathering (gathered-statement.ts), against PostgreSQL:
// a lone call is a batch of one of the one (batched) statement; calls made together share a
// statement and each gets the answer it would get alone. Of two claims or two reports of one
// attempt gathered together, exactly one wins, so at most one POST and one next step per attempt.
const db = createDatabase(process.env.DATABASE_URL!);
const userId = newUserId();
const schedule = { webhookRetryDelayMs: 40_000, webhookFinalAttemptMs: 300_000, webhookTimeoutMs: 10_000 };
// Only attempts that end the delivery are finished here: nothing is enqueued.
const deps = {
  db,
  config: schedule,
  logger: createLogger("gathered-attempts-test", "silent"),
  webhookQueue: undefined as unknown as Queue<WebhookJobData>,
  now: () => new Date(),
};
beforeAll(() => ensureUser(db, userId));
afterAll(() => db.$disconnect());

async function deliveryOf(delivery: { status: DeliveryStatus; attempts?: number; nextAttemptAt?: Date | null }) {
  const id = newTaskId();
  const finishedAt = new Date();
  // Only what a decision and a claim read: a terminal task and its end.
  await insertRow(db, "tasks", {
    id,
    userId,
    endpoint: "images",
    model: "sim-image-1",
    status: "completed",
    input: {},
    requestId: "req_1",
    billingMethod: "flat",
    reservedCredits: 4,
    finishedAt,
  });
  await insertRow(db, "webhook_deliveries", { taskId: id, url: "https://h.example/x", ...delivery });
  return { taskId: id, finishedAt };
}

test("a lone decision and claim run as a batch of one; a second claim of the attempt gets nothing", async () => {
  const { taskId } = await deliveryOf({ status: "pending" });
  expect(await loadAttemptDecision(db, taskId, 1, schedule)).toMatchObject({ kind: "run", url: "https://h.example/x", manual: false });
  const claimed = await claimAttempt(db, taskId, 1, new Date());
  expect(claimed).toMatchObject({ requestedBy: null, task: { id: taskId, status: "completed" } });
  expect(await claimAttempt(db, taskId, 1, new Date())).toBeNull();
  expect(await loadAttemptDecision(db, taskId, 1, schedule)).toMatchObject({ kind: "lost", open: { attemptId: claimed!.id } });
  expect(await loadAttemptDecision(db, newTaskId(), 1, schedule)).toEqual({ kind: "skip", reason: "no_delivery" });
});

test("decisions made together: each as it would be alone", async () => {
  const pending = await deliveryOf({ status: "pending" });
  const done = await deliveryOf({ status: "delivered", attempts: 1 });
  const waiting = await deliveryOf({ status: "in_progress", attempts: 1, nextAttemptAt: new Date() });
  const asks = [
    [pending.taskId, 1],
    [done.taskId, 2],
    [waiting.taskId, 2],
    [waiting.taskId, 3],
    [newTaskId(), 1],
  ] as const;
  const together = await Promise.all(asks.map(([taskId, attempt]) => loadAttemptDecision(db, taskId, attempt, schedule)));
  const alone = [];
  for (const [taskId, attempt] of asks) alone.push(await loadAttemptDecision(db, taskId, attempt, schedule));
  expect(together).toEqual(alone);
  expect(together.map((decision) => (decision.kind === "skip" ? decision.reason : decision.kind))).toEqual([
    "run",
    "finished",
    "run",
    "not_awaited",
    "no_delivery",
  ]);
});

test("claims made together: of two of the same attempt one gets it, others each get their own", async () => {
  const twice = await deliveryOf({ status: "pending" });
  const other = await deliveryOf({ status: "pending" });
  const now = new Date();
  const [first, second, third] = await Promise.all([
    claimAttempt(db, twice.taskId, 1, now),
    claimAttempt(db, twice.taskId, 1, now),
    claimAttempt(db, other.taskId, 1, now),
  ]);
  expect([first, second].filter((claim) => claim !== null)).toHaveLength(1);
  expect(third).toMatchObject({ task: { id: other.taskId } });
  expect((await listAttempts(db, twice.taskId)).map((attempt) => attempt.id)).toEqual([(first ?? second)!.id]);
});

test("reports made together: of a result and `attempt_lost` for one attempt only one is recorded", async () => {
  const { taskId, finishedAt } = await deliveryOf({ status: "in_progress", attempts: 2, nextAttemptAt: new Date() });
  const claim = (await claimAttempt(db, taskId, 3, new Date()))!;
  const open: OpenAttempt = { taskId, attempt: 3, manual: false, attemptId: claim.id, startedAt: claim.startedAt, taskFinishedAt: finishedAt };
  const reports = await Promise.all([
    finishAttempt(deps, open, { ok: true, status: 200 }, new Date()),
    finishAttempt(deps, open, workerFailure("attempt_lost"), new Date()),
  ]);
  expect(reports.filter((report) => report !== null)).toHaveLength(1);
  const recorded = (await listAttempts(db, taskId))[0]!;
  const delivery = await findRow(db, "webhook_deliveries", { taskId });
  expect(delivery?.status).toBe(reports[0] ? "delivered" : "failed");
  expect(recorded.outcome).toBe(reports[0] ? "delivered" : "attempt_lost");
  // A lone report of the recorded attempt changes nothing either.
  expect(await finishAttempt(deps, open, workerFailure("attempt_lost"), new Date())).toBeNull();
});
