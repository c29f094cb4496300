import pg from "pg";
import request from "supertest";
import { createSubmitter, type SubmitInput } from "../src/services/submit-task.ts";
import { createTestGateway, createUser, snapshot, type TestUser } from "./support/test-gateway.ts";
import { findTask } from "@gen/db";

// The lanes of users whose row is held take at most half the pool: with DATABASE_POOL_SIZE=2 one
// held user waits on a connection, a second waits for the lane, and the pool's other connection
// still writes everybody else's submissions. Rows really locked, from a connection of the test's.
const IMAGES = "/api/v1/images/generations";

test("DATABASE_POOL_SIZE=2, two users' rows held: a third user's requests are still written at once", async () => {
  const gw = await createTestGateway({ DATABASE_POOL_SIZE: "2" });
  const locker = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await locker.connect();
  try {
    const probe = await createUser(gw.deps.db, 10_000);
    const res = await request(gw.app).post(IMAGES).set("Authorization", probe.auth).send({ model: "sim-image-1", prompt: "probe" });
    expect(res.status).toBe(202);
    const price = (await findTask(gw.deps.db, res.body.id))!.reservedCredits;
    const [first, second, other] = await Promise.all([1, 2, 3].map(() => createUser(gw.deps.db, 10 * price)));
    const input = (user: TestUser, n: number): SubmitInput => ({
      userId: user.userId,
      requestId: `req-lanes-${user.userId}-${n}`,
      endpoint: "images",
      body: { model: "sim-image-1", prompt: `lanes ${n}` },
      idempotencyKey: undefined,
    });
    const submit = createSubmitter(gw.deps);
    await locker.query("BEGIN");
    await locker.query("SELECT credits FROM users WHERE id = ANY($1) FOR UPDATE", [[first!.userId, second!.userId]]);
    const held = Promise.all([submit(input(first!, 0)), submit(input(second!, 0))]);
    // Both deferred to lanes; the first lane's statement now waits for its row on one connection.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const others = await Promise.all(Array.from({ length: 3 }, (_, n) => submit(input(other!, n))));
    expect(new Set(others.map((one) => one.task.id)).size).toBe(3);
    expect(await snapshot(gw.deps.db, other!.userId)).toMatchObject({ credits: 7 * price, tasks: 3 });
    await locker.query("COMMIT");
    const answers = await held;
    expect(answers.map((one) => one.replayed)).toEqual([false, false]);
    for (const user of [first!, second!]) expect(await snapshot(gw.deps.db, user.userId)).toMatchObject({ credits: 9 * price, tasks: 1 });
  } finally {
    await locker.query("ROLLBACK").catch(() => {});
    await locker.end();
    await gw.close();
  }
});
