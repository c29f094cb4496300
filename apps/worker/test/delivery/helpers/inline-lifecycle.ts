import type { InlineAttempts } from "../../../src/delivery/inline-attempt.ts";
import type { Receiver } from "../../../../../packages/webhook-sender/test/helpers/receiver.ts";
import { createScratchDatabase } from "../../../../../test/support/scratch-database.ts";
import { createDeliveryFixture, type DeliveryFixture, type FixtureOptions } from "./delivery-fixture.ts";

/**
 * The hooks of a test file that runs inline attempts: one delivery fixture for the file (`ready`
 * receives it; with `scratchDatabase`, on a database of its own), and after each test the inline
 * attempts, workers and receivers it made are closed, so no attempt of one test outlives it.
 */
export function inlineLifecycle(options: FixtureOptions & { scratchDatabase?: boolean }, ready: (fx: DeliveryFixture) => void) {
  const made = { receivers: [] as Receiver[], inlines: [] as InlineAttempts[] };
  let fx: DeliveryFixture;
  let database: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  beforeAll(async () => {
    const { scratchDatabase, ...fixture } = options;
    if (scratchDatabase) database = await createScratchDatabase();
    fx = await createDeliveryFixture({ ...fixture, ...(database ? { databaseUrl: database.url } : {}) });
    ready(fx);
  }, 60_000);
  afterEach(async () => {
    for (const inline of made.inlines.splice(0)) await inline.close();
    await fx.stopWorkers();
    for (const receiver of made.receivers.splice(0)) await receiver.close();
  });
  afterAll(async () => {
    await fx.close();
    await database?.drop();
  });
  return made;
}
