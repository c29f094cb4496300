import { loadCatalog } from "@gen/catalog";
import { loadConfig } from "@gen/config";
import { createDatabase, findTask } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { TaskStatus } from "@gen/domain";
import { Wf } from "@gen/errors";
import { settleTask } from "@gen/ledger";
import { createLogger } from "@gen/logger";
import type { Provider } from "@gen/providers";
import type { GenerationDeps } from "../src/generation/generation-deps.ts";
import { generationStep } from "../src/generation/process-generation.ts";
import { insertRow, insertUser } from "../../../test/support/db-rows.ts";

const db = createDatabase(process.env.DATABASE_URL!);
const userId = newUserId();
beforeAll(() => insertUser(db, userId, 10));
afterAll(() => db.$disconnect());

/** A provider that records what it is asked and never answers a submit. */
function recordingProvider() {
  const calls: string[] = [];
  const provider: Provider = {
    submit: async () => {
      calls.push("submit");
      throw new Error("not expected");
    },
    poll: async (id) => {
      calls.push(`poll ${id}`);
      return { state: "running" };
    },
    cancel: async (id) => {
      calls.push(`cancel ${id}`);
    },
  };
  return { calls, provider };
}

function deps(provider: Provider): GenerationDeps {
  return {
    config: loadConfig({ DATABASE_URL: process.env.DATABASE_URL }),
    db,
    catalog: loadCatalog(undefined),
    providers: () => provider,
    logger: createLogger("worker-test", "silent"),
  } as unknown as GenerationDeps;
}

async function task(data: Record<string, unknown>) {
  const id = newTaskId();
  await insertRow(db, "tasks", {
    id,
    userId,
    endpoint: "detect",
    model: "sim-detect-1",
    input: { text: "x" },
    requestId: "req_x",
    billingMethod: "flat",
    reservedCredits: 1,
    status: "queued",
    ...data,
  });
  return id;
}

test("a job whose id names no task, or is garbage, ends without touching anything", async () => {
  const { calls, provider } = recordingProvider();
  for (const id of [newTaskId(), "", "' OR 1=1 --", "x".repeat(100_000), "task_\u0000", undefined as unknown as string, { id: 1 } as unknown as string]) {
    expect(await generationStep(deps(provider), id)).toBeUndefined();
  }
  expect(calls).toEqual([]);
});

test("a running task is polled once per step and given its next poll time; nothing is submitted again", async () => {
  const { calls, provider } = recordingProvider();
  const startedAt = new Date(Date.now() - 30_000);
  const id = await task({ status: "in_progress", startedAt, upstreamId: "up_1" });
  const before = Date.now();
  const pollAt = (await generationStep(deps(provider), id))?.at;
  expect(calls).toEqual(["poll up_1"]);
  // 30 s old: the next poll is 2 s away.
  expect(pollAt).toBeGreaterThanOrEqual(before + 2000);
  expect(pollAt).toBeLessThanOrEqual(Date.now() + 2000);
  expect((await findTask(db, id))!.status).toBe("in_progress");
});

test("the step after a client's cancel cancels the upstream job; other terminal tasks are left alone", async () => {
  const { calls, provider } = recordingProvider();
  const canceled = await task({ status: "failed", errorCode: 80008, startedAt: new Date(), finishedAt: new Date(), upstreamId: "up_canceled" });
  const completed = await task({ status: "completed", startedAt: new Date(), finishedAt: new Date(), upstreamId: "up_done" });
  const failed = await task({ status: "failed", errorCode: 80003, startedAt: new Date(), finishedAt: new Date(), upstreamId: "up_failed" });
  for (const id of [canceled, completed, failed]) expect(await generationStep(deps(provider), id)).toBeUndefined();
  expect(calls).toEqual(["cancel up_canceled"]);
});

test("a job's first run treats whatever row it finds as a read would: terminal, discarded, already started, or missing", async () => {
  const { calls, provider } = recordingProvider();
  const canceled = await task({ status: "failed", errorCode: 80008, startedAt: new Date(), finishedAt: new Date(), upstreamId: "up_first_canceled" });
  const discarded = await task({ discardedAt: new Date() });
  const started = await task({ status: "in_progress", startedAt: new Date(Date.now() - 30_000), upstreamId: "up_first_running" });
  for (const id of [canceled, discarded, newTaskId(), "' OR 1=1 --"]) expect(await generationStep(deps(provider), id, true)).toBeUndefined();
  expect(await generationStep(deps(provider), started, true)).toMatchObject({ at: expect.any(Number) });
  expect(calls).toEqual(["cancel up_first_canceled", "poll up_first_running"]);
  const rows = await Promise.all([canceled, discarded, started].map((id) => findTask(db, id)));
  expect(rows.map((r) => r!.status).sort()).toEqual(["failed", "in_progress", "queued"]);
  expect((await findTask(db, discarded))!.startedAt).toBeNull();
});

test("a step past the task's deadline times it out (80002), cancels the upstream job and refunds", async () => {
  const { calls, provider } = recordingProvider();
  const config = loadConfig({ DATABASE_URL: process.env.DATABASE_URL });
  const id = await task({ status: "in_progress", startedAt: new Date(Date.now() - config.generationTimeoutMs - 1), upstreamId: "up_late" });
  await insertRow(db, "ledger_entries", { userId, taskId: id, kind: "reserve", amount: 1, delta: -1 });
  expect(await generationStep(deps(provider), id)).toBeUndefined();
  expect(calls).toEqual(["cancel up_late"]);
  const row = (await findTask(db, id))!;
  expect({ status: row.status, errorCode: row.errorCode, chargedCredits: row.chargedCredits }).toEqual({
    status: "failed",
    errorCode: 80002,
    chargedCredits: 0,
  });
});

/** A webhook queue that records the jobs added to it. */
function recordingHandOff() {
  const calls: string[] = [];
  const webhookQueue = { add: async (_name: string, data: { taskId: string; attempt: number }) => void calls.push(`add ${data.taskId} ${data.attempt}`) };
  const handOff = { webhookQueue } as unknown as Pick<GenerationDeps, "webhookQueue">;
  return { calls, handOff };
}

test("finish hands off attempt 1 after the settlement commits: its job is added", async () => {
  const { provider } = recordingProvider();
  const config = loadConfig({ DATABASE_URL: process.env.DATABASE_URL });
  const url = "https://hooks.test.example/h";
  const id = await task({ status: "in_progress", startedAt: new Date(Date.now() - config.generationTimeoutMs - 1), upstreamId: "up_hook", webhookUrl: url });
  await insertRow(db, "ledger_entries", { userId, taskId: id, kind: "reserve", amount: 1, delta: -1 });
  const { calls, handOff } = recordingHandOff();
  expect(await generationStep({ ...deps(provider), ...handOff }, id)).toBeUndefined();
  expect(calls).toEqual([`add ${id} 1`]);
  expect((await findTask(db, id))!.status).toBe("failed");
});

test("a task cancelled while finish settles it: nothing is handed off", async () => {
  const { provider } = recordingProvider();
  const config = loadConfig({ DATABASE_URL: process.env.DATABASE_URL });
  const url = "https://hooks.test.example/h";
  const id = await task({ status: "in_progress", startedAt: new Date(Date.now() - config.generationTimeoutMs - 1), upstreamId: "up_cancel", webhookUrl: url });
  await insertRow(db, "ledger_entries", { userId, taskId: id, kind: "reserve", amount: 1, delta: -1 });
  // The gateway's cancel commits after the step loaded the task, before its finish (while the upstream job is cancelled).
  provider.cancel = async () => void (await settleTask(db, { id, reservedCredits: 1 }, { status: TaskStatus.Failed, code: Wf.Canceled, charge: 0 }));
  const { calls, handOff } = recordingHandOff();
  expect(await generationStep({ ...deps(provider), ...handOff }, id)).toBeUndefined();
  expect(calls).toEqual([]);
  expect((await findTask(db, id))!.errorCode).toBe(Wf.Canceled);
});
