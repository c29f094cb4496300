import { ApiError, Err } from "@gen/errors";
import { newTaskId } from "@gen/ids";
import { reserveTask, reserveTasks } from "@gen/ledger";
import { QUEUE_NAMES, createQueue, createRedis } from "@gen/queues";
import { createSubmitter, type SubmitInput } from "../src/services/submit-task.ts";
import type { GatewayDeps } from "../src/services/gateway-deps.ts";
import { countCalls } from "../../../test/support/count-calls.ts";
import { createTestGateway, createUser, expectLedgerInvariant, snapshot, visibleTaskCount, type TestGateway, type TestUser } from "./support/test-gateway.ts";
import { findTask } from "@gen/db";

// Group commit: submissions started in the same event-loop turn share one statement and one
// addBulk, and each still gets the answer it would get alone. The submitter is driven directly so
// that a batch is exactly the calls made in one synchronous stretch (no Idempotency-Key: nothing
// awaits before the batch; with one, the key's read comes first and batches are whatever arrives).
let gw: TestGateway;
let small: number; // price of `image(1)`
let large: number; // price of `image(4)`

const image = (n: number, prompt = "batch"): Record<string, unknown> => ({ model: "sim-image-1", prompt, n });
let seq = 0;
const input = (user: TestUser, body: Record<string, unknown>, idempotencyKey?: string): SubmitInput => ({
  userId: user.userId,
  requestId: `req-group-${seq++}`,
  endpoint: "images",
  body,
  idempotencyKey,
});

type Answer = { id: string; replayed: boolean } | { code: number; message: string };
async function answers(deps: GatewayDeps, inputs: SubmitInput[], submit = createSubmitter(deps)): Promise<Answer[]> {
  return Promise.all(
    inputs.map((one) =>
      submit(one).then(
        ({ task, replayed }) => ({ id: task.id, replayed }),
        (error: unknown) => {
          if (!(error instanceof ApiError)) throw error;
          return { code: error.code, message: error.message };
        },
      ),
    ),
  );
}
const created = (answer: Answer) => "id" in answer;
const idOf = (answer: Answer) => ("id" in answer ? answer.id : undefined);

beforeAll(async () => {
  gw = await createTestGateway();
  const probe = await createUser(gw.deps.db, 10_000);
  const [one, four] = await answers(gw.deps, [input(probe, image(1)), input(probe, image(4))]);
  small = (await findTask(gw.deps.db, idOf(one!)!))!.reservedCredits;
  large = (await findTask(gw.deps.db, idOf(four!)!))!.reservedCredits;
  expect(large).toBeGreaterThan(small);
});
afterAll(() => gw.close());

test("one batch of several users: each user's balance decides only its own requests", async () => {
  const rich = await createUser(gw.deps.db, 10 * small);
  const poor = await createUser(gw.deps.db, 2 * small);
  const broke = await createUser(gw.deps.db, 0);
  const got = await answers(gw.deps, [
    input(poor, image(1)),
    input(rich, image(1)),
    input(poor, image(1)),
    input(broke, image(1)),
    input(rich, image(1)),
    input(poor, image(1)),
  ]);
  expect(got.map(created)).toEqual([true, true, true, false, true, false]);
  expect(got[3]).toEqual({ code: Err.InsufficientCredits, message: `Insufficient credits: this request needs ${small}, the balance is 0` });
  expect(got[5]).toEqual({ code: Err.InsufficientCredits, message: `Insufficient credits: this request needs ${small}, the balance is 0` });
  expect(await snapshot(gw.deps.db, rich.userId)).toMatchObject({ credits: 8 * small, tasks: 2 });
  expect(await snapshot(gw.deps.db, poor.userId)).toMatchObject({ credits: 0, tasks: 2 });
  expect(await snapshot(gw.deps.db, broke.userId)).toMatchObject({ credits: 0, tasks: 0 });
  for (const user of [rich, poor, broke]) await expectLedgerInvariant(gw.deps.db, user.userId);
  // Every created task has its job, under the task's id.
  for (const id of got.map(idOf).filter(Boolean)) expect(await gw.deps.generationQueue.getJob(id!)).toBeDefined();
});

test("one user over-spending within a batch: debited in arrival order, a later cheaper request that still fits wins", async () => {
  // Alone, one after another: large fits, large does not (small + large - large < large), small fits, small does not.
  const user = await createUser(gw.deps.db, large + small);
  const got = await answers(gw.deps, [input(user, image(4)), input(user, image(4)), input(user, image(1)), input(user, image(1))]);
  expect(got.map(created)).toEqual([true, false, true, false]);
  expect(got[1]).toEqual({ code: Err.InsufficientCredits, message: `Insufficient credits: this request needs ${large}, the balance is ${small}` });
  expect(got[3]).toEqual({ code: Err.InsufficientCredits, message: `Insufficient credits: this request needs ${small}, the balance is 0` });
  expect(await snapshot(gw.deps.db, user.userId)).toMatchObject({ credits: 0, tasks: 2 });
  await expectLedgerInvariant(gw.deps.db, user.userId);
});

test("a refused expensive request does not block a cheaper one after it in the same batch", async () => {
  const user = await createUser(gw.deps.db, small);
  const got = await answers(gw.deps, [input(user, image(4)), input(user, image(1))]);
  expect(got.map(created)).toEqual([false, true]);
  expect(await snapshot(gw.deps.db, user.userId)).toMatchObject({ credits: 0, tasks: 1 });
  await expectLedgerInvariant(gw.deps.db, user.userId);
});

test("one Idempotency-Key twice in a batch and again in a later batch: one task, charged once, the others replay it", async () => {
  const user = await createUser(gw.deps.db, 10 * small);
  const other = await createUser(gw.deps.db, 10 * small);
  const submit = createSubmitter(gw.deps);
  const first = await answers(gw.deps, [input(user, image(1), "k1"), input(other, image(1), "k1"), input(user, image(1), "k1"), input(user, image(1))], submit);
  expect(first.map(created)).toEqual([true, true, true, true]);
  const [a, b, c, d] = first as { id: string; replayed: boolean }[];
  expect(c!.id).toBe(a!.id);
  expect([a!.replayed, c!.replayed].sort()).toEqual([false, true]);
  expect(b!.id).not.toBe(a!.id); // the same key of another user is another key
  expect(d!.id).not.toBe(a!.id);
  const later = await answers(gw.deps, [input(user, image(1), "k1"), input(user, image(1, "another body"), "k1")], submit);
  expect(later[0]).toEqual({ id: a!.id, replayed: true });
  expect(later[1]).toEqual({ code: Err.ParameterInvalid, message: "Idempotency-Key was already used with a different request body" });
  expect(await snapshot(gw.deps.db, user.userId)).toMatchObject({ credits: 8 * small, tasks: 2 });
  await expectLedgerInvariant(gw.deps.db, user.userId);
});

test("one Idempotency-Key with two bodies at once: as one after another, one creates and the other is 20003", async () => {
  const user = await createUser(gw.deps.db, 10 * small);
  const got = await answers(gw.deps, [input(user, image(1), "k2"), input(user, image(1, "changed"), "k2")]);
  // Each request reads its key before it joins a batch, so the two may land in two batches written
  // at the same time; which one commits first is not ordered (as for two clients racing), and the
  // other must then answer as the second of two would.
  expect(got.filter(created)).toHaveLength(1);
  expect(got.find((answer) => !created(answer))).toEqual({
    code: Err.ParameterInvalid,
    message: "Idempotency-Key was already used with a different request body",
  });
  expect(await snapshot(gw.deps.db, user.userId)).toMatchObject({ credits: 9 * small, tasks: 1 });
});

test("two gateways racing on one Idempotency-Key: the batch that loses on the key falls back one by one, and its other requests still succeed", async () => {
  const user = await createUser(gw.deps.db, 10 * small);
  const bystander = await createUser(gw.deps.db, 10 * small);
  const [one, two] = [createSubmitter(gw.deps), createSubmitter(gw.deps)];
  const [left, right] = await Promise.all([
    answers(gw.deps, [input(user, image(1), "race"), input(bystander, image(1))], one),
    answers(gw.deps, [input(user, image(1), "race"), input(bystander, image(1))], two),
  ]);
  expect([left, right].flat().every(created)).toBe(true);
  expect(idOf(left[0]!)).toBe(idOf(right[0]!));
  expect(await snapshot(gw.deps.db, user.userId)).toMatchObject({ credits: 9 * small, tasks: 1 });
  expect(await snapshot(gw.deps.db, bystander.userId)).toMatchObject({ credits: 8 * small, tasks: 2 });
  await expectLedgerInvariant(gw.deps.db, user.userId);
});

/** A gateway whose database refuses the batched statement (the one with `WITH ORDINALITY`) with `error`. */
async function gatewayRefusingBatches(error: () => Error): Promise<{ gw: TestGateway; refused: () => number }> {
  let refused = 0;
  const plugin: Parameters<GatewayDeps["db"]["$kysely"]["withPlugin"]>[0] = {
    transformQuery(args) {
      // insertTask is insertTasks with one row: only a statement of several tasks (its one parameter
      // a JSON array of them) is refused.
      const tasks = args.node.kind === "RawNode" ? (args.node.parameters[0] as { value?: unknown }).value : undefined;
      const rows: unknown = typeof tasks === "string" && tasks.startsWith("[") ? JSON.parse(tasks) : undefined;
      if (args.node.kind === "RawNode" && args.node.sqlFragments.join("").includes("WITH ORDINALITY") && Array.isArray(rows) && rows.length > 1) {
        refused++;
        throw error();
      }
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  const patched = await createTestGateway({}, (deps) => ({
    db: new Proxy(deps.db, { get: (target, prop) => (prop === "$kysely" ? target.$kysely.withPlugin(plugin) : Reflect.get(target, prop, target)) }),
  }));
  return { gw: patched, refused: () => refused };
}

test("a batch PostgreSQL refuses (a poison row) falls back to one by one: each request gets its own answer", async () => {
  const { gw: patched, refused } = await gatewayRefusingBatches(() => Object.assign(new Error("unsupported Unicode escape sequence"), { code: "22P05" }));
  try {
    const user = await createUser(patched.deps.db, large + small);
    const got = await answers(patched.deps, [input(user, image(4)), input(user, image(4)), input(user, image(1))]);
    expect(refused()).toBe(1);
    expect(got.map(created)).toEqual([true, false, true]);
    expect((got[1] as { code: number }).code).toBe(Err.InsufficientCredits);
    expect(await snapshot(patched.deps.db, user.userId)).toMatchObject({ credits: 0, tasks: 2 });
    await expectLedgerInvariant(patched.deps.db, user.userId);
  } finally {
    await patched.close();
  }
});

test("an unreachable PostgreSQL answers 70002 to every request of the batch, nothing written", async () => {
  const { gw: patched } = await gatewayRefusingBatches(() => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }));
  try {
    const user = await createUser(patched.deps.db, 10 * small);
    const before = await snapshot(patched.deps.db, user.userId);
    const got = await answers(patched.deps, [input(user, image(1)), input(user, image(1)), input(user, image(4))]);
    expect(got.map((answer) => ("code" in answer ? answer.code : answer))).toEqual([Err.DatabaseUnavailable, Err.DatabaseUnavailable, Err.DatabaseUnavailable]);
    expect(await snapshot(patched.deps.db, user.userId)).toEqual(before);
  } finally {
    await patched.close();
  }
});

test("an enqueue that fails for the whole batch: each task refunded and hidden (60002), one addBulk", async () => {
  const deadRedis = createRedis("redis://127.0.0.1:1", "request");
  const failing = await createTestGateway({}, (deps) => ({ generationQueue: createQueue(QUEUE_NAMES.generation, deadRedis, deps.config.queuePrefix) }));
  try {
    const addBulk = countCalls(failing.deps.generationQueue, "addBulk");
    const user = await createUser(failing.deps.db, 10 * small);
    const other = await createUser(failing.deps.db, 10 * small);
    const got = await answers(failing.deps, [input(user, image(1)), input(other, image(1)), input(user, image(4))]);
    expect(got.map((answer) => ("code" in answer ? answer.code : answer))).toEqual([Err.WorkflowStartFailed, Err.WorkflowStartFailed, Err.WorkflowStartFailed]);
    expect(addBulk.calls).toHaveLength(1);
    addBulk.restore();
    for (const one of [user, other]) {
      const after = await snapshot(failing.deps.db, one.userId);
      expect(after.credits).toBe(10 * small);
      expect(await visibleTaskCount(failing.deps.db, one.userId)).toBe(0);
      await expectLedgerInvariant(failing.deps.db, one.userId);
    }
  } finally {
    await failing.close();
    deadRedis.disconnect();
  }
});

test("a row PostgreSQL refuses fails the whole statement and writes nothing; alone, it fails only itself", async () => {
  const user = await createUser(gw.deps.db, 10 * small);
  const row = (prompt: string) => ({
    id: newTaskId(),
    userId: user.userId,
    endpoint: "images" as const,
    model: "sim-image-1",
    input: { prompt },
    webhookUrl: null,
    requestId: `req-group-${seq++}`,
    billingMethod: "flat",
    price: small,
  });
  const rows = [row("fine"), row("bad \u0000 text"), row("fine too")];
  await expect(reserveTasks(gw.deps.db, rows)).rejects.toMatchObject({ code: "22P05" });
  expect(await snapshot(gw.deps.db, user.userId)).toMatchObject({ credits: 10 * small, tasks: 0, ledger: 1 });
  const alone = await Promise.allSettled(rows.map((one) => reserveTask(gw.deps.db, one)));
  expect(alone.map((one) => one.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(await snapshot(gw.deps.db, user.userId)).toMatchObject({ credits: 8 * small, tasks: 2 });
  await expectLedgerInvariant(gw.deps.db, user.userId);
});

test("a batch whose enqueue hangs holds the next batch up by maxWaitMs at most; each request is answered after its own enqueue, a failed one only for its batch", async () => {
  const queue = gw.deps.generationQueue;
  const original = queue.addBulk.bind(queue);
  const held: { release: (fail: boolean) => void }[] = [];
  // The first batch's enqueue is held until the test lets it go (and then fails); later ones go through.
  queue.addBulk = ((jobs: Parameters<typeof queue.addBulk>[0]) => {
    if (held.length > 0) return original(jobs);
    return new Promise((resolve, reject) => held.push({ release: (fail) => (fail ? reject(new Error("redis went away")) : resolve(original(jobs))) }));
  }) as typeof queue.addBulk;
  try {
    const submit = createSubmitter(gw.deps);
    const user = await createUser(gw.deps.db, 10 * small);
    let firstAnswered = false;
    const first = answers(gw.deps, [input(user, image(1))], submit).finally(() => (firstAnswered = true));
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // Batch 1's statement is committed and its enqueue pending: batch 2 is written and enqueued meanwhile.
    const [second] = await answers(gw.deps, [input(user, image(1))], submit);
    expect(created(second!)).toBe(true);
    expect(await queue.getJob(idOf(second!)!)).toBeDefined();
    expect(firstAnswered).toBe(false);
    held[0]!.release(true);
    const [answer] = await first;
    expect(answer).toMatchObject({ code: Err.WorkflowStartFailed });
    expect(await snapshot(gw.deps.db, user.userId)).toMatchObject({ credits: 9 * small });
    expect(await visibleTaskCount(gw.deps.db, user.userId)).toBe(1);
    await expectLedgerInvariant(gw.deps.db, user.userId);
  } finally {
    queue.addBulk = original;
  }
});
