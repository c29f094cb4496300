import { DelayedError, type Job } from "bullmq";
import { RENDER_TIMEOUT_MS } from "@gen/domain";
import { recordWebhookDelay } from "@gen/metrics";
import { createDeliveryCaps, type CapAnswer, type DeliveryCaps, type RedisClient, type WebhookJobData } from "@gen/queues";
import type { Config } from "@gen/config";
import { lastStartIn } from "@gen/webhook-delivery";
import type { DeliveryDeps } from "./delivery-deps.ts";

/** A place under the caps, held from before the claim to the end of the POST. */
export interface CapPlace {
  /** Gives the place back (once; later calls do nothing). Never throws: a place not given back is dropped after its hold. */
  release(): void;
}

const NO_PLACE: CapPlace = { release: () => undefined };

/** The caps with the settings of every process that sends attempts. */
export function createWorkerCaps(redis: RedisClient, config: Config): DeliveryCaps {
  return createDeliveryCaps(redis, {
    prefix: config.queuePrefix,
    hostCap: config.webhookHostConcurrency,
    customerCap: config.webhookCustomerConcurrency,
    // The longest attempt (render bound + the receiver's timeout), plus a margin.
    holdMs: RENDER_TIMEOUT_MS + config.webhookTimeoutMs + 5_000,
  });
}

// The least an attempt over a cap waits for its turn, and a little jitter on top (a tenth of the
// wait, at most this): turns handed out by several workers at once do not all land on one tick.
const MIN_TURN_WAIT_MS = 5;
const MAX_JITTER_MS = 20;
// BullMQ serves its wait list before any prioritized job: an attempt that found a cap full comes
// back prioritized, behind every fresh attempt, so a host's or customer's backlog never delays others'.
const OVER_CAP_PRIORITY = 1;

/**
 * Takes the attempt's place under its receiver host's cap (host and port, lower case) and its
 * customer's. Over either: the job goes back to delayed until the turn the caps gave it
 * (DelayedError, as BullMQ wants), its worker slot free meanwhile, and returns behind every fresh
 * attempt (OVER_CAP_PRIORITY); it is never delayed past the last moment its window allows a start,
 * so that run records `stale_claim` without sending. Redis trouble here does not stop delivery: the
 * attempt runs without a place (logged).
 */
export async function takeCapPlace(
  deps: DeliveryDeps,
  job: Job<WebhookJobData>,
  token: string | undefined,
  to: { url: string; customer: string; windowEndsAt: Date },
): Promise<CapPlace> {
  const host = hostOf(to.url);
  if (!deps.caps || host === null || token === undefined || job.id === undefined) return NO_PLACE;
  const { caps } = deps;
  const attempt = job.id;
  const lastStart = lastStartIn(to.windowEndsAt, deps.config);
  let answer: CapAnswer;
  try {
    answer = await caps.take(host, to.customer, attempt, lastStart);
  } catch (error) {
    deps.logger.warn("delivery cap check failed; attempt runs without it", { task_id: job.data.taskId, err: error });
    return NO_PLACE;
  }
  if (answer.taken) return placeOf(deps, caps, host, to.customer, attempt);
  recordWebhookDelay(deps.metrics, "cap", answer.full);
  if (job.priority !== OVER_CAP_PRIORITY) await job.changePriority({ priority: OVER_CAP_PRIORITY });
  await job.moveToDelayed(askAgainAt(deps, answer.turnAt, lastStart), token);
  throw new DelayedError();
}

function placeOf(deps: DeliveryDeps, caps: DeliveryCaps, host: string, customer: string, attempt: string): CapPlace {
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      caps
        .release(host, customer, attempt)
        .catch((error: unknown) => deps.logger.warn("could not release a delivery cap place; it is dropped after its hold", { err: error }));
    },
  };
}

/**
 * When an attempt over a cap asks again: at its turn (a few ms at least, a little jitter), at the
 * latest just past its last start, where its run records `stale_claim` without sending (the caps
 * give a turn past the last start to no one, and tell this attempt its last start instead).
 */
function askAgainAt(deps: DeliveryDeps, turnAt: number, lastStart: number): number {
  const now = deps.now().getTime();
  const wait = Math.max(MIN_TURN_WAIT_MS, turnAt - now);
  return Math.min(now + wait + Math.random() * Math.min(MAX_JITTER_MS, wait / 10), Math.max(now, lastStart + 1));
}

/** The receiver's host and port, lower case; null if the URL is unparsable (the sender then fails it). */
function hostOf(url: string): string | null {
  try {
    return new URL(url).host.toLowerCase() || null;
  } catch {
    return null;
  }
}
