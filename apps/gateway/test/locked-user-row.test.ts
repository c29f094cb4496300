import pg from "pg";
import request from "supertest";
import { createDatabase, findTask } from "@gen/db";
import { ApiError, Err } from "@gen/errors";
import { createSubmitter, type SubmitInput } from "../src/services/submit-task.ts";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, expectLedgerInvariant, snapshot, type TestGateway, type TestUser } from "./support/test-gateway.ts";

// Group commit with one user's row held by another transaction (an operator's open transaction in
// psql): the batch does not wait for it, so only that user's requests wait, and only they fail when
// the wait reaches statement_timeout. The row is really locked, from a second connection.
const IMAGES = "/api/v1/images/generations";
const STATEMENT_TIMEOUT_MS = 2000;
const body = (prompt: string) => ({ model: "sim-image-1", prompt });
let gw: TestGateway;
let price: number;
let locker: pg.Client;

beforeAll(async () => {
  // A shorter statement_timeout than production's 4 s keeps the test short; the mechanism is the same.
  gw = await createTestGateway({}, () => ({
    db: createDatabase(process.env.DATABASE_URL!, { queryTimeoutMs: STATEMENT_TIMEOUT_MS + 1000, statementTimeoutMs: STATEMENT_TIMEOUT_MS }),
  }));
  const probe = await createUser(gw.deps.db, 10_000);
  const res = await request(gw.app).post(IMAGES).set("Authorization", probe.auth).send(body("probe"));
  expect(res.status).toBe(202);
  price = (await findTask(gw.deps.db, res.body.id))!.reservedCredits;
  locker = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await locker.connect();
});
afterAll(async () => {
  await locker.query("ROLLBACK").catch(() => {});
  await locker.end();
  await gw.close();
});

/** Holds the user's row as `SELECT ... FOR UPDATE` in an open transaction does, until `release`. */
async function holdRow(user: TestUser): Promise<{ release: () => Promise<void> }> {
  await locker.query("BEGIN");
  await locker.query("SELECT credits FROM users WHERE id = $1 FOR UPDATE", [user.userId]);
  return { release: async () => void (await locker.query("COMMIT")) };
}

const input = (user: TestUser, n: number): SubmitInput => ({
  userId: user.userId,
  requestId: `req-locked-${user.userId}-${n}`,
  endpoint: "images",
  body: body(`locked ${n}`),
  idempotencyKey: undefined,
});

/** Two users with 10 tasks' worth of credits (the other one `otherTasks`), a submitter of their own, and the first user's row held. */
async function heldAndOther(otherTasks = 10) {
  const held = await createUser(gw.deps.db, 10 * price);
  const other = await createUser(gw.deps.db, otherTasks * price);
  return { held, other, submit: createSubmitter(gw.deps), lock: await holdRow(held) };
}

test("one batch, one user's row held: the other user's requests are written and answered at once; the held one's waits for the row and is then written", async () => {
  // The row held, then one request of the held user and five of the other in one synchronous stretch: one batch.
  const { held, other, submit, lock } = await heldAndOther();
  let heldAnswered = false;
  const started = Date.now();
  const heldAnswer = submit(input(held, 0)).finally(() => (heldAnswered = true));
  const others = await Promise.all(Array.from({ length: 5 }, (_, n) => submit(input(other, n))));
  const othersMs = Date.now() - started;
  expect(heldAnswered).toBe(false);
  expect(new Set(others.map((one) => one.task.id)).size).toBe(5);
  for (const one of others) expect(await gw.deps.generationQueue.getJob(one.task.id)).toBeDefined();
  expect(await snapshot(gw.deps.db, other.userId)).toMatchObject({ credits: 5 * price, tasks: 5 });
  // Still held: nothing of the held user's is written yet, and its request is still waiting.
  expect(await snapshot(gw.deps.db, held.userId)).toMatchObject({ credits: 10 * price, tasks: 0 });
  expect(heldAnswered).toBe(false);
  await lock.release();
  const { task, replayed } = await heldAnswer;
  expect(replayed).toBe(false);
  expect(await gw.deps.generationQueue.getJob(task.id)).toBeDefined();
  expect(await snapshot(gw.deps.db, held.userId)).toMatchObject({ credits: 9 * price, tasks: 1 });
  for (const user of [held, other]) await expectLedgerInvariant(gw.deps.db, user.userId);
  process.stdout.write(`row held: the other user's 5 requests of the same batch answered in ${othersMs} ms, the held user's after the release\n`);
});

test("held past statement_timeout: only the held user's requests fail (70002, nothing written), and the same batch's others are written", async () => {
  const { held, other, submit, lock } = await heldAndOther();
  try {
    const heldAnswers = Promise.allSettled([submit(input(held, 0)), submit(input(held, 1))]);
    const others = await Promise.all(Array.from({ length: 5 }, (_, n) => submit(input(other, n))));
    expect(others).toHaveLength(5);
    const settled = await heldAnswers;
    for (const one of settled) {
      expect(one.status).toBe("rejected");
      const error = (one as PromiseRejectedResult).reason as unknown;
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).code).toBe(Err.DatabaseUnavailable);
    }
    expect(await snapshot(gw.deps.db, held.userId)).toMatchObject({ credits: 10 * price, tasks: 0 });
    expect(await snapshot(gw.deps.db, other.userId)).toMatchObject({ credits: 5 * price, tasks: 5 });
  } finally {
    await lock.release();
  }
  for (const user of [held, other]) await expectLedgerInvariant(gw.deps.db, user.userId);
});

test("the held user retrying its 503 in a loop while another user keeps submitting: the other's answers stay prompt and correct; the held user's are 70002 until the release, then 202, charged once", async () => {
  const held = await createUser(gw.deps.db, 10 * price);
  const other = await createUser(gw.deps.db, 100_000 * price);
  // Both keys resolved and cached before the row is held (the lookup is not what this is about).
  for (const user of [held, other]) expect((await request(gw.app).get("/api/v1/account").set("Authorization", user.auth)).status).toBe(200);
  const before = await snapshot(gw.deps.db, held.userId);
  const lock = await holdRow(held);
  let released = false;
  let heldDone = false;
  const heldStatuses: { status: number; code?: number; afterRelease: boolean }[] = [];
  // The held user retries the same request (one Idempotency-Key) as soon as it is answered 503.
  const heldLoop = (async () => {
    for (;;) {
      const sentAfterRelease = released;
      const res = await request(gw.app).post(IMAGES).set("Authorization", held.auth).set("Idempotency-Key", "retry-me").send(body("held"));
      heldStatuses.push({ status: res.status, code: res.body?.error?.code, afterRelease: sentAfterRelease });
      if (res.status === 202) return res.body.id as string;
      expectError(res, 503, 70002);
    }
  })().finally(() => (heldDone = true));
  // The other user: eight clients, each submitting one request after another until the held user
  // is through (whether a retry shares a batch with them is up to timing; the next test makes sure).
  const otherMs: number[] = [];
  const otherStatuses: number[] = [];
  let whileHeld = 0;
  const otherLoop = Promise.all(
    Array.from({ length: 8 }, async (_, client) => {
      for (let n = 0; !heldDone; n++) {
        const started = Date.now();
        const res = await request(gw.app)
          .post(IMAGES)
          .set("Authorization", other.auth)
          .send(body(`other ${client} ${n}`));
        otherMs.push(Date.now() - started);
        otherStatuses.push(res.status);
        if (!released) whileHeld++;
      }
    }),
  );
  // Keep the row held until the held user has been refused three times.
  while (heldStatuses.length < 3) await new Promise((resolve) => setTimeout(resolve, 50));
  released = true;
  await lock.release();
  const [taskId] = await Promise.all([heldLoop, otherLoop]);
  // The written request retried once more: the same task again, not a second one.
  const again = await request(gw.app).post(IMAGES).set("Authorization", held.auth).set("Idempotency-Key", "retry-me").send(body("held"));
  expect({ status: again.status, id: again.body.id }).toEqual({ status: 202, id: taskId });

  expect(otherStatuses).toEqual(otherMs.map(() => 202));
  const refused = heldStatuses.filter((one) => one.status === 503);
  expect(refused.length).toBeGreaterThanOrEqual(3);
  expect(refused.every((one) => one.code === Err.DatabaseUnavailable)).toBe(true);
  expect(heldStatuses.at(-1)!.status).toBe(202);
  // Once released, the first request sent after the release is written (one sent before may still be refused).
  expect(heldStatuses.filter((one) => one.afterRelease && one.status !== 202)).toEqual([]);
  // One task for the key, charged once.
  expect(await snapshot(gw.deps.db, held.userId)).toMatchObject({ credits: before.credits - price, tasks: 1 });
  expect((await findTask(gw.deps.db, taskId))!.userId).toBe(held.userId);
  expect(await snapshot(gw.deps.db, other.userId)).toMatchObject({ credits: (100_000 - otherMs.length) * price, tasks: otherMs.length });
  for (const user of [held, other]) await expectLedgerInvariant(gw.deps.db, user.userId);
  // Every answer of the other user's came while the held user waited: one that waited on the row
  // would take statement_timeout at least.
  expect(whileHeld).toBeGreaterThanOrEqual(10);
  expect(Math.max(...otherMs)).toBeLessThan(STATEMENT_TIMEOUT_MS);
  const sorted = [...otherMs].sort((a, b) => a - b);
  process.stdout.write(
    `held user: ${refused.length} x 503/70002 then 202; other user: ${otherMs.length} submissions (${whileHeld} while held), ` +
      `ms median ${sorted[Math.floor(sorted.length / 2)]}, p99 ${sorted[Math.floor(sorted.length * 0.99)]}, max ${sorted.at(-1)}\n`,
  );
});

type Answer = { id: string } | { code: number };
const settle = (submission: Promise<{ task: { id: string } }>): Promise<Answer> =>
  submission.then(
    ({ task }) => ({ id: task.id }),
    (error: unknown) => {
      if (!(error instanceof ApiError)) throw error;
      return { code: error.code };
    },
  );

test("each retry of the held user's in one batch with five of another user's: the five are written and answered at once every time; the retries answer 70002 until the release, then one is written", async () => {
  const { held, other, submit, lock } = await heldAndOther(1000);
  let released = false;
  const heldAnswers: { answer: Answer; afterRelease: boolean }[] = [];
  const otherAnswers: Answer[] = [];
  const otherMs: number[] = [];
  const loop = (async () => {
    for (let attempt = 0; ; attempt++) {
      const sentAfterRelease = released;
      const started = Date.now();
      // One synchronous stretch: the held user's retry and five of the other's share one batch.
      const heldAnswer = settle(submit(input(held, attempt)));
      const others = await Promise.all(Array.from({ length: 5 }, (_, n) => settle(submit(input(other, attempt * 5 + n)))));
      otherMs.push(Date.now() - started);
      otherAnswers.push(...others);
      const answer = await heldAnswer;
      heldAnswers.push({ answer, afterRelease: sentAfterRelease });
      if ("id" in answer) return;
    }
  })();
  while (heldAnswers.length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  released = true;
  await lock.release();
  await loop;

  expect(otherAnswers.every((answer) => "id" in answer)).toBe(true);
  const refused = heldAnswers.filter(({ answer }) => !("id" in answer));
  expect(refused.length).toBeGreaterThanOrEqual(2);
  expect(refused.map(({ answer }) => answer)).toEqual(refused.map(() => ({ code: Err.DatabaseUnavailable })));
  expect(refused.filter(({ afterRelease }) => afterRelease)).toEqual([]);
  // Only the retry that was written is charged.
  expect(await snapshot(gw.deps.db, held.userId)).toMatchObject({ credits: 9 * price, tasks: 1 });
  expect(await snapshot(gw.deps.db, other.userId)).toMatchObject({ credits: (1000 - otherAnswers.length) * price, tasks: otherAnswers.length });
  for (const user of [held, other]) await expectLedgerInvariant(gw.deps.db, user.userId);
  // A batch that waited on the held row would answer the five after statement_timeout at the earliest.
  expect(Math.max(...otherMs)).toBeLessThan(STATEMENT_TIMEOUT_MS);
  process.stdout.write(
    `held user's retries in batches with 5 of another user's: ${refused.length} x 70002 then written; the five answered in ${otherMs.join(", ")} ms\n`,
  );
});

test("one Idempotency-Key twice from the held user while its row is held: both wait, then both answer the one task, charged once; the other user's request is answered at once", async () => {
  const { held, other, submit, lock } = await heldAndOther();
  const keyed = (n: number): SubmitInput => ({ ...input(held, n), body: body("twice"), idempotencyKey: "twice" });
  let heldAnswered = false;
  const heldAnswers = Promise.all([submit(keyed(0)), submit(keyed(1))]).finally(() => (heldAnswered = true));
  const mine = await submit(input(other, 0));
  expect(mine.replayed).toBe(false);
  expect(heldAnswered).toBe(false);
  const released = Date.now();
  await lock.release();
  const [first, second] = await heldAnswers;
  expect(second.task.id).toBe(first.task.id);
  expect([first.replayed, second.replayed].sort()).toEqual([false, true]);
  process.stdout.write(`one key twice while held: both answered ${Date.now() - released} ms after the release\n`);
  expect(await snapshot(gw.deps.db, held.userId)).toMatchObject({ credits: 9 * price, tasks: 1 });
  for (const user of [held, other]) await expectLedgerInvariant(gw.deps.db, user.userId);
});
