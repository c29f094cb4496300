import { loadCatalog } from "@gen/catalog";
import { loadConfig } from "@gen/config";
import { createDatabase, findTask } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { createLogger } from "@gen/logger";
import { createMetrics, renderMetrics } from "@gen/metrics";
import type { GenerationDeps } from "../src/generation/generation-deps.ts";
import { processGeneration } from "../src/generation/process-generation.ts";
import { insertRow, insertUser } from "../../../test/support/db-rows.ts";

const db = createDatabase(process.env.DATABASE_URL!);
const userId = newUserId();

beforeAll(async () => {
  await insertUser(db, userId, 10);
});
afterAll(() => db.$disconnect());

const line = (body: string, prefix: string) => body.split("\n").find((l) => l.startsWith(prefix));

test("a settled task is counted once by status, code, endpoint, model and provider, and its generation is timed by the same", async () => {
  const metrics = createMetrics({ defaultMetrics: false });
  // A model missing from the catalog fails with 80001 before any provider, storage or queue is used.
  const unused = () => {
    throw new Error("not used by this test");
  };
  const deps = {
    config: loadConfig({ DATABASE_URL: process.env.DATABASE_URL }),
    db,
    catalog: loadCatalog(undefined),
    providers: unused,
    storage: {},
    webhookQueue: {},
    logger: createLogger("worker-test", "silent"),
    metrics,
  } as unknown as GenerationDeps;
  const id = newTaskId();
  await insertRow(db, "tasks", {
    id,
    userId,
    endpoint: "audio",
    model: "no-such-model",
    status: "queued",
    input: {},
    requestId: "req_x",
    billingMethod: "flat",
    reservedCredits: 1,
  });

  await processGeneration(deps, id);
  await processGeneration(deps, id); // BullMQ may deliver twice: the second run finds it terminal.

  expect((await findTask(db, id))!.errorCode).toBe(80001);
  const { body } = await renderMetrics(metrics);
  const outcome = 'tasks_finished_total{status="failed",code="80001",endpoint="audio",model="no-such-model",provider="none"}';
  expect(line(body, outcome)).toBe(`${outcome} 1`);
  const duration = 'generation_duration_seconds_count{endpoint="audio",model="no-such-model",provider="none",status="failed"}';
  expect(line(body, duration)).toBe(`${duration} 1`);
});
