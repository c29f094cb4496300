import { randomBytes } from "node:crypto";

/**
 * Every Redis key prefix and scratch database a test run makes carries the run's id (set by the
 * suites' globalSetup in TEST_RUN_ID, inherited by the test workers and the apps they start), so
 * the globalTeardown can find whatever this run left on the shared Redis and PostgreSQL without
 * mistaking another run's keys for its own. Outside a run (a benchmark) the names are just random.
 */
function runMark(): string {
  const id = process.env.TEST_RUN_ID;
  return id ? `r${id}_` : "";
}

/** A QUEUE_PREFIX (or any key prefix) of its own: `<kind>_r<run id>_<random>`. */
export function testPrefix(kind: string): string {
  return `${kind}_${runMark()}${randomBytes(4).toString("hex")}`;
}

/** SCAN pattern of every key under this run's prefixes (testPrefix). */
export function runKeyPattern(runId: string): string {
  return `*_r${runId}_*`;
}

/** A scratch database name (`gen_scratch_r<run id>_<random>`). */
export function scratchDatabaseName(): string {
  return `gen_scratch_${runMark()}${randomBytes(4).toString("hex")}`;
}
