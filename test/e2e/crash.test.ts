import { spawn, type ChildProcess } from "node:child_process";
import { reconcileTasks } from "../../apps/worker/src/reconcile-tasks.ts";
import { ledgerHolds, startStack, type Stack } from "./stack.ts";
import { findTask } from "@gen/db";
import { countRows, findRows } from "../support/db-rows.ts";

let stack: Stack;
let user: { userId: string; auth: string };
const children: ChildProcess[] = [];

beforeAll(async () => {
  stack = await startStack({ JOB_LOCK_MS: "1000" });
  user = await stack.user();
});
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await stack.close();
});

/** A real worker process (`pnpm start:worker` runs the same file), ready once it says so. */
async function workerProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--conditions=@gen/source", "--import", "tsx", "apps/worker/src/main.ts"], {
    env: { ...process.env, ...stack.env, RECONCILE_INTERVAL_MS: "600000", WEBHOOK_FINAL_ATTEMPT_MS: "1300000", NODE_OPTIONS: "" },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`worker exited with ${code}`)));
  });
  return child;
}

async function until<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test("SIGKILL mid-task: another worker finishes it once, on the same upstream job, settled once", async () => {
  const first = await workerProcess();
  const { body } = await stack.submit(user.auth, "/api/v1/images/generations", {
    model: "sim-image-1",
    prompt: "crash me [[sim:delay_ms=2500]]",
    size: "256x256",
  });
  const running = await until(async () => {
    const row = (await findTask(stack.gateway.db, body.id))!;
    return row.upstreamId ? row : null;
  });
  first.kill("SIGKILL");
  await new Promise((resolve) => first.once("exit", resolve));

  await workerProcess();
  const task = await stack.waitTerminal(user.auth, body.id, 30_000);
  expect(task.status).toBe("completed");
  const row = (await findTask(stack.gateway.db, body.id))!;
  expect(row.upstreamId).toBe(running.upstreamId);
  expect(row.startedAt).toEqual(running.startedAt);
  const ledger = await findRows(stack.gateway.db, "ledger_entries", { taskId: body.id });
  expect(ledger.map((e) => e.kind).sort()).toEqual(["charge", "refund", "reserve"]);
  await ledgerHolds(stack, user.userId);
}, 60_000);

test("Redis loses every key with tasks in flight: the reconciler brings each one to a terminal state", async () => {
  stack.startWorker();
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const delay = i % 3 === 0 ? "" : ` [[sim:delay_ms=${300 + i * 100}]]`;
    ids.push((await stack.submit(user.auth, "/api/v1/detect", { model: "sim-detect-1", text: `flush ${i}${delay}` })).body.id);
  }
  await until(async () => (await countRows(stack.gateway.db, "tasks", { id: ids, status: "in_progress" })) > 0);

  // What a Redis restart without persistence does to this deployment: every key is gone.
  const redis = stack.gateway.redis;
  const keys = await redis.keys(`${stack.config.queuePrefix}:*`);
  if (keys.length > 0) await redis.del(...keys);

  await until(async () => {
    await reconcileTasks(stack.gateway.db, stack.gateway.generationQueue, 200);
    return (await countRows(stack.gateway.db, "tasks", { id: ids, status: ["completed", "failed"] })) === ids.length;
  }, 30_000);
  await ledgerHolds(stack, user.userId);
}, 60_000);
