// Fault: Redis stops while clients poll. The task result lives in PostgreSQL, and polling is the
// documented fallback of webhooks, so polls stay served (bounded by each gateway's own per-user
// limiter) while submissions, which need the queue, answer 503/70001; all recovers with Redis.
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { failWithAppOutput, startFaultStack, type FaultStack } from "./support/fault-stack.ts";
import { until } from "./support/load.ts";
import { startPrivateRedis, type PrivateRedis } from "./support/private-redis.ts";
import { findTask } from "@gen/db";

let database: ScratchDatabase | undefined;
let redis: PrivateRedis | undefined;
let stack: FaultStack | undefined;
const fail = (error: unknown): never => failWithAppOutput(stack, error);
const BURST = 5;

describe("Redis stopped while clients poll", () => {
  beforeAll(async () => {
    database = await createScratchDatabase();
    redis = await startPrivateRedis();
    // One token per 5 s: the burst is the whole allowance during the test, whatever the load.
    stack = await startFaultStack({ databaseUrl: database.url, redisUrl: redis.url, env: { POLL_RATE_PER_SEC: "0.2", POLL_RATE_BURST: String(BURST) } });
  });
  afterAll(async () => {
    await stack?.close();
    await redis?.stop();
    await database?.drop();
  });

  test("polls 200 within the per-user limit and 429 over it, submissions 503/70001, recovery when Redis returns", async () => {
    const { auth } = await stack!.user();
    const submitted = await stack!.call(auth, "POST", "/api/v1/detect", { model: "sim-detect-1", text: "before the outage" });
    expect(submitted.status).toBe(202);
    const id = submitted.body.id as string;
    await until(async () => (await findTask(stack!.db, id))?.status === "completed", 20_000, "task completed").catch(fail);

    await redis!.stop();
    const polls = [];
    for (let i = 0; i < BURST + 1; i++) polls.push(await stack!.call(auth, "GET", `/api/v1/tasks/${id}`));
    expect(polls.map((p) => p.status)).toEqual([...Array(BURST).fill(200), 429]);
    expect(polls[0]!.body).toMatchObject({ id, status: "completed" });
    expect(polls[BURST]!.body.error.code).toBe(50001);
    const submitDown = await stack!.call(auth, "POST", "/api/v1/detect", { model: "sim-detect-1", text: "during the outage" });
    expect({ status: submitDown.status, code: submitDown.body.error?.code }).toEqual({ status: 503, code: 70001 });
    const slowest = Math.max(...polls.map((p) => p.ms), submitDown.ms);

    await redis!.restart();
    const after = await until(
      async () => {
        const res = await stack!.call(auth, "POST", "/api/v1/detect", { model: "sim-detect-1", text: "after the outage" });
        return res.status === 202 ? res : null;
      },
      20_000,
      "submissions accepted again",
    ).catch(fail);
    await until(async () => (await findTask(stack!.db, after.body.id as string))?.status === "completed", 20_000, "new task completed").catch(fail);
    // Polls count on Redis again: a fresh bucket there, whatever the process used meanwhile.
    expect((await stack!.call(auth, "GET", `/api/v1/tasks/${after.body.id as string}`)).status).toBe(200);
    process.stdout.write(`Redis down: ${BURST} polls served (200), then 429/50001; submissions 503/70001; slowest answer ${slowest} ms\n`);
  }, 90_000);

  test("a hung Redis (SIGSTOP) does not hang polls: answered from PostgreSQL after the limiter's 500 ms bound at most", async () => {
    const { auth } = await stack!.user();
    const submitted = await stack!.call(auth, "POST", "/api/v1/detect", { model: "sim-detect-1", text: "before the hang" });
    expect(submitted.status).toBe(202);
    redis!.pause();
    try {
      const polls = [];
      for (let i = 0; i < 3; i++) polls.push(await stack!.call(auth, "GET", `/api/v1/tasks/${submitted.body.id as string}`));
      expect(polls.map((p) => p.status)).toEqual([200, 200, 200]);
      const submitHung = await stack!.call(auth, "POST", "/api/v1/detect", { model: "sim-detect-1", text: "during the hang" });
      expect({ status: submitHung.status, code: submitHung.body.error?.code }).toEqual({ status: 503, code: 70001 });
      const times = polls.map((p) => p.ms);
      // Generous: the bound is 500 ms for the first request, none for the next ones (breaker open).
      expect(Math.max(...times)).toBeLessThan(1900);
      process.stdout.write(`Redis hung: polls answered in ${times.join(", ")} ms; submission 503/70001 in ${submitHung.ms} ms\n`);
    } finally {
      redis!.resume();
    }
  }, 60_000);
});
