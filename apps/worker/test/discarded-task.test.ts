import { loadCatalog } from "@gen/catalog";
import { TaskStatus } from "@gen/domain";
import { loadConfig } from "@gen/config";
import { createDatabase, findTask, type Database, type Task } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { createLogger } from "@gen/logger";
import type { GenerationDeps } from "../src/generation/generation-deps.ts";
import { processGeneration } from "../src/generation/process-generation.ts";
import { countRows, insertRow, insertUser, updateRows } from "../../../test/support/db-rows.ts";

const db = createDatabase(process.env.DATABASE_URL!);
afterAll(() => db.$disconnect());

/**
 * The database as a worker sees it when the gateway's compensation commits between its load and its
 * start: the first read of the task (the worker's load) answers with the row from before.
 */
let staleLoads = 0;
function loadedBeforeDiscard(stale: Task): Database {
  const pending = new Set<unknown>();
  const $kysely = db.$kysely.withPlugin({
    transformQuery: ({ node, queryId }) => {
      if (staleLoads === 0 && node.kind === "SelectQueryNode" && JSON.stringify(node.from).includes('"name":"tasks"')) pending.add(queryId);
      return node;
    },
    transformResult: async ({ queryId, result }) => {
      if (!pending.delete(queryId)) return result;
      staleLoads++;
      return { rows: [stale] };
    },
  });
  return new Proxy(db, { get: (target, name) => (name === "$kysely" ? $kysely : Reflect.get(target, name)) });
}

test("a task the gateway refunded and hid after the worker loaded it is never started", async () => {
  const userId = newUserId();
  await insertUser(db, userId, 10);
  const id = newTaskId();
  // A model missing from the catalog would fail the task at once with 80001 if it ran.
  await insertRow(db, "tasks", {
    id,
    userId,
    endpoint: "audio",
    model: "no-such-model",
    status: TaskStatus.Queued,
    input: {},
    requestId: "req_x",
    billingMethod: "flat",
    reservedCredits: 1,
  });
  const stale = (await findTask(db, id))!;
  // The gateway's compensation (an enqueue that timed out): hidden and refunded while still queued.
  await updateRows(db, "tasks", { id }, { discardedAt: new Date(), chargedCredits: 0, refundedCredits: 1 });

  const deps = {
    config: loadConfig({ DATABASE_URL: process.env.DATABASE_URL }),
    db: loadedBeforeDiscard(stale),
    catalog: loadCatalog(undefined),
    logger: createLogger("worker-test", "silent"),
  } as unknown as GenerationDeps;
  await processGeneration(deps, id);
  expect(staleLoads).toBe(1);

  const after = (await findTask(db, id))!;
  expect({ status: after.status, startedAt: after.startedAt, errorCode: after.errorCode }).toEqual({
    status: TaskStatus.Queued,
    startedAt: null,
    errorCode: null,
  });
  expect(await countRows(db, "ledger_entries", { taskId: id })).toBe(0);
});
