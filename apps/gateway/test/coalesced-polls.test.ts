import request from "supertest";
import { createDatabase, findTask, type Queryable, type Task } from "@gen/db";
import { newTaskId } from "@gen/ids";
import { renderTask } from "@gen/task-render";
import { createTaskReader, createTaskWithDeliveryReader } from "../src/services/read-task.ts";
import { expectError } from "./support/envelope.ts";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";

// Polls whose reads start together share one statement (read-task.ts createTaskReader); each
// still gets exactly the answer a read of its own would give.
let gw: TestGateway;
let alice: TestUser;
let bob: TestUser;
const aliceTasks: string[] = [];
let bobTask: string;
const statements: string[] = [];

beforeAll(async () => {
  gw = await createTestGateway({}, () => ({ db: createDatabase(process.env.DATABASE_URL!, { onQuery: (sql) => statements.push(sql) }) }));
  alice = await createUser(gw.deps.db, 10_000);
  bob = await createUser(gw.deps.db, 10_000);
  for (let i = 0; i < 3; i++) aliceTasks.push(await submit(alice, `alice ${i}`));
  bobTask = await submit(bob, "bob");
});
afterAll(() => gw.close());

async function submit(user: TestUser, prompt: string): Promise<string> {
  const res = await request(gw.app).post("/api/v1/images/generations").set("Authorization", user.auth).send({ model: "sim-image-1", prompt });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

const poll = (id: string, user: TestUser) => request(gw.app).get(`/api/v1/tasks/${id}`).set("Authorization", user.auth);

test("many concurrent polls of different and the same ids, by two users: each gets its own answer", async () => {
  const unknown = newTaskId();
  const cases = [
    ...aliceTasks.flatMap((id) => [
      { id, user: alice, owner: true },
      { id, user: alice, owner: true },
      { id, user: bob, owner: false },
    ]),
    { id: bobTask, user: bob, owner: true },
    { id: bobTask, user: alice, owner: false },
    { id: unknown, user: alice, owner: false },
    { id: "task_not-an-id", user: bob, owner: false },
  ];
  const answers = await Promise.all(cases.map((c) => poll(c.id, c.user)));
  for (const [i, res] of answers.entries()) {
    const { id, owner } = cases[i]!;
    if (!owner) {
      expectError(res, 404, 40001);
      continue;
    }
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.text).toBe(renderTask((await findTask(gw.deps.db, id))!));
  }
});

test("reads that start together are one statement; the same id is read once", async () => {
  const read = createTaskReader(gw.deps.db);
  statements.length = 0;
  const ids = [...aliceTasks, aliceTasks[0]!, bobTask, newTaskId()];
  const tasks = await Promise.all([...ids.map((id) => read(id, alice.userId)), read(bobTask, bob.userId)]);
  expect(statements).toHaveLength(1);
  expect(statements[0]).toMatch(/from "tasks" where "id" = any\(\$1::text\[\]\)/);
  expect(tasks.map((task) => task?.id ?? null)).toEqual([...aliceTasks, aliceTasks[0], null, null, bobTask]);
});

test("polls with include=webhook gather the same way: one statement reads their tasks with their deliveries", async () => {
  const read = createTaskWithDeliveryReader(gw.deps.db);
  statements.length = 0;
  const tasks = await Promise.all([...aliceTasks.map((id) => read(id, alice.userId)), read(bobTask, alice.userId)]);
  expect(statements).toHaveLength(1);
  expect(statements[0]).toMatch(/from "tasks" as "t" left join "webhook_deliveries" as "w"[\s\S]*where "t"."id" = any\(\$\d+::text\[\]\)/);
  expect(tasks.map((task) => task?.id ?? null)).toEqual([...aliceTasks, null]);
  // These tasks have no webhook_url: no delivery row, so no webhook object.
  expect(tasks.map((task) => task?.webhook ?? null)).toEqual([null, null, null, null]);
});

/** A database whose task statements wait until the test answers them, one by one. */
function heldDatabase(real: Queryable) {
  const sent: { ids: string[]; answer: (rows: Task[] | Error) => void }[] = [];
  const db = {
    $kysely: {
      // Only the statement's compilation (once per process) uses the real builder.
      selectFrom: real.$kysely.selectFrom.bind(real.$kysely),
      executeQuery: (query: { parameters: readonly unknown[] }) =>
        new Promise((resolve, reject) => {
          sent.push({ ids: query.parameters[0] as string[], answer: (rows) => (rows instanceof Error ? reject(rows) : resolve({ rows })) });
        }),
    },
  } as unknown as Queryable;
  return { db, sent };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test("a poll never joins a statement already in flight: it waits for one sent after it arrived", async () => {
  const { db, sent } = heldDatabase(gw.deps.db);
  const read = createTaskReader(db);
  const task = (await findTask(gw.deps.db, aliceTasks[0]!))!;
  const first = read(task.id, alice.userId);
  await tick();
  expect(sent).toHaveLength(1);
  const second = read(task.id, alice.userId);
  await tick();
  // The first statement is still out: the second poll got a statement of its own.
  expect(sent).toHaveLength(2);
  sent[0]!.answer([{ ...task, status: "queued" }]);
  sent[1]!.answer([{ ...task, status: "in_progress" }]);
  expect((await first)?.status).toBe("queued");
  expect((await second)?.status).toBe("in_progress");
});

test("a failed statement fails every poll in it with its error, and the next statement is sent", async () => {
  const { db, sent } = heldDatabase(gw.deps.db);
  const read = createTaskReader(db);
  const reads = [read(aliceTasks[0]!, alice.userId), read(aliceTasks[1]!, alice.userId), read(bobTask, bob.userId)].map((p) =>
    p.then(
      () => null,
      (e: unknown) => e,
    ),
  );
  await tick();
  expect(sent).toHaveLength(1);
  const failure = new Error("relation secret_table is broken");
  sent[0]!.answer(failure);
  expect(await Promise.all(reads)).toEqual([failure, failure, failure]);
  const after = read(bobTask, bob.userId);
  await tick();
  sent[1]!.answer([(await findTask(gw.deps.db, bobTask))!]);
  expect((await after)?.id).toBe(bobTask);
});

describe("a batched read that fails answers every poll with the documented error", () => {
  async function gatewayWhoseTaskReadsFail(error: () => Error): Promise<TestGateway> {
    return createTestGateway({}, () => {
      const db = createDatabase(process.env.DATABASE_URL!);
      // The task statement only: key lookups (query builders) run on the executor directly.
      db.$kysely.executeQuery = () => Promise.reject(error());
      return { db };
    });
  }

  test("PostgreSQL unreachable: 503/70002 for each", async () => {
    const failing = await gatewayWhoseTaskReadsFail(() => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }));
    try {
      const answers = await Promise.all([...aliceTasks, bobTask].map((id) => request(failing.app).get(`/api/v1/tasks/${id}`).set("Authorization", alice.auth)));
      for (const res of answers) expectError(res, 503, 70002);
    } finally {
      await failing.close();
    }
  });

  test("any other failure: 500/60099 for each, nothing of it in the answer", async () => {
    const failing = await gatewayWhoseTaskReadsFail(() => new Error("relation secret_table is broken"));
    try {
      const answers = await Promise.all([...aliceTasks, bobTask].map((id) => request(failing.app).get(`/api/v1/tasks/${id}`).set("Authorization", alice.auth)));
      for (const res of answers) {
        expectError(res, 500, 60099);
        expect(res.text).not.toContain("secret");
      }
    } finally {
      await failing.close();
    }
  });
});
