import { loadDeliveryStates, type Database } from "@gen/db";
import { decideAttempt, type AttemptDecision } from "./attempt-guard.ts";
import type { Schedule } from "./delivery-schedule.ts";
import { gatheredStatement } from "./gathered-statement.ts";

const readState = gatheredStatement(loadDeliveryStates);

/**
 * What a job for attempt `attempt` may do: the delivery, its task and that attempt's row read in
 * one round trip (gathered with the reads of concurrent attempts), then decideAttempt.
 */
export async function loadAttemptDecision(db: Database, taskId: string, attempt: number, schedule: Schedule): Promise<AttemptDecision> {
  if (!Number.isInteger(attempt) || attempt < 1) return { kind: "skip", reason: "not_awaited" };
  return decideAttempt(await readState(db, { taskId, attempt }), attempt, schedule);
}
