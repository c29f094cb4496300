// Generation runs as steps: a task waiting for its upstream is a delayed job, not a
// busy concurrency slot, so one worker with WORKER_CONCURRENCY=1 tracks many running tasks at once.
import { ledgerHolds, startStack, type Stack } from "./stack.ts";
import { findTask } from "@gen/db";
import { findRows } from "../support/db-rows.ts";

let stack: Stack;
let user: { userId: string; auth: string };

beforeAll(async () => {
  stack = await startStack({ WORKER_CONCURRENCY: "1", GENERATION_TIMEOUT_MS: "20000" });
  stack.startWorker();
  user = await stack.user();
});
afterAll(() => stack.close());
afterEach(() => ledgerHolds(stack, user.userId));

async function until<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test("one concurrency slot tracks every running upstream job at once, each submitted once", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    ids.push((await stack.submit(user.auth, "/api/v1/detect", { model: "sim-detect-1", text: `parked ${i} [[sim:delay_ms=3000]]` })).body.id);
  }
  // All six submitted upstream while none has finished: no slot is held while an upstream works.
  const running = await until(async () => {
    const rows = await findRows(stack.gateway.db, "tasks", { id: ids });
    if (rows.some((row) => row.status === "completed" || row.status === "failed"))
      throw new Error(`a task ended before all were running: ${rows.map((r) => r.status).join(",")}`);
    return rows.every((row) => row.upstreamId !== null) ? rows : null;
  });

  for (const id of ids) expect((await stack.waitTerminal(user.auth, id, 15_000)).status).toBe("completed");
  const after = await findRows(stack.gateway.db, "tasks", { id: ids });
  // Polls of later steps used the recorded upstream job; nothing was submitted twice.
  expect(Object.fromEntries(after.map((row) => [row.id, row.upstreamId]))).toEqual(Object.fromEntries(running.map((row) => [row.id, row.upstreamId])));
}, 40_000);

test("a task cancelled while its job waits for the next poll ends 80008, refunded, and is not settled again", async () => {
  const { body } = await stack.submit(user.auth, "/api/v1/detect", { model: "sim-detect-1", text: "cancel me [[sim:delay_ms=4000]]" });
  await until(async () => (await findTask(stack.gateway.db, body.id))!.upstreamId);
  const res = await fetch(`${stack.baseUrl}/api/v1/tasks/${body.id}/cancel`, { method: "POST", headers: { Authorization: user.auth } });
  expect(res.status).toBe(200);
  // The parked job's next step finds the task terminal and ends; the job completes.
  await until(async () => (await stack.gateway.generationQueue.getJobState(body.id)) === "completed", 10_000);
  const task = await stack.waitTerminal(user.auth, body.id);
  expect(task).toMatchObject({ status: "failed", error: { code: 80008 } });
  expect(task.billing).toMatchObject({ refunded_credits: task.billing.reserved_credits });
}, 30_000);
