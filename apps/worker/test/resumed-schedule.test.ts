import { createCatalog } from "@gen/catalog";
import { loadConfig } from "@gen/config";
import { createDatabase } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { createLogger } from "@gen/logger";
import type { Provider } from "@gen/providers";
import type { GenerationDeps } from "../src/generation/generation-deps.ts";
import { CALLBACK_SAFETY_POLL_MS } from "../src/generation/poll-schedule.ts";
import { generationStep } from "../src/generation/process-generation.ts";
import { insertRow, insertUser } from "../../../test/support/db-rows.ts";

// The poll schedule is read from the task's row and its model: a step run by any worker, after a
// crash or a restart, keeps the schedule the task's job was created with.
const db = createDatabase(process.env.DATABASE_URL!);
const userId = newUserId();
beforeAll(() => insertUser(db, userId, 10));
afterAll(() => db.$disconnect());

const running: Provider = { submit: async () => ({ upstreamId: "unused" }), poll: async () => ({ state: "running" }), cancel: async () => {} };
const base = { endpoint: "detect", provider: "http", upstreamModel: "x", pricing: { method: "flat", credits: 1 }, moderationRefund: { output: 0 } };
const catalog = createCatalog({
  models: [
    { ...base, id: "plain-detect" },
    { ...base, id: "timed-detect", expectedDurationMs: 60_000 },
  ],
});
const deps = {
  config: loadConfig({ DATABASE_URL: process.env.DATABASE_URL }),
  db,
  catalog,
  providers: () => running,
  logger: createLogger("worker-test", "silent"),
} as unknown as GenerationDeps;

async function runningTask(model: string, ageMs: number, upstreamCallback: boolean): Promise<string> {
  const id = newTaskId();
  await insertRow(db, "tasks", {
    id,
    userId,
    endpoint: "detect",
    model,
    input: { text: "x" },
    requestId: "req_x",
    billingMethod: "flat",
    reservedCredits: 1,
    status: "in_progress",
    startedAt: new Date(Date.now() - ageMs),
    upstreamId: `up_${id}`,
    upstreamProvider: "http",
    upstreamModel: "x",
    upstreamCallback,
  });
  return id;
}

async function nextIn(id: string): Promise<{ inMs: number; afterParked: boolean }> {
  const before = Date.now();
  const next = (await generationStep(deps, id))!;
  return { inMs: next.at - before, afterParked: next.afterParked !== undefined };
}

test("a job created with a callback address is polled on the safety schedule, and looks for a callback after its park", async () => {
  const { inMs, afterParked } = await nextIn(await runningTask("plain-detect", 10_000, true));
  expect(inMs).toBeGreaterThanOrEqual(CALLBACK_SAFETY_POLL_MS - 100);
  expect(inMs).toBeLessThanOrEqual(CALLBACK_SAFETY_POLL_MS + 100);
  expect(afterParked).toBe(true);
});

test("a job of a model with expectedDurationMs is next polled at its expected end", async () => {
  const { inMs, afterParked } = await nextIn(await runningTask("timed-detect", 20_000, false));
  expect(inMs).toBeGreaterThanOrEqual(39_000);
  expect(inMs).toBeLessThanOrEqual(40_100);
  expect(afterParked).toBe(false);
});

test("without either, the generic schedule: 2 s for a job 30 s old", async () => {
  const { inMs } = await nextIn(await runningTask("plain-detect", 30_000, false));
  expect(inMs).toBeGreaterThanOrEqual(1_900);
  expect(inMs).toBeLessThanOrEqual(2_100);
});

test("the last poll is at the generation cap, not before it", async () => {
  const cap = deps.config.generationTimeoutMs;
  const { inMs } = await nextIn(await runningTask("plain-detect", cap - 5_000, true));
  expect(inMs).toBeGreaterThan(4_000);
  expect(inMs).toBeLessThanOrEqual(5_100);
});
