import { DelayedError, type Job } from "bullmq";
import { RENDER_TIMEOUT_MS } from "@gen/domain";
import { recordWebhookDelay } from "@gen/metrics";
import { createDeliveryCaps, type DeliveryCaps, type RedisClient, type WebhookJobData } from "@gen/queues";
import type { Config } from "@gen/config";
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

// An attempt over a cap asks again after this, four times longer on every further try of its job
// (up to four times the receiver's timeout: a hanging host frees each place once per timeout, and
// its backlog of attempts 3, each with a minute's window, should cost a handful of turns each) and
// with jitter, so a hanging host's backlog costs a few job turns per attempt rather than one per tick.
const FIRST_RETRY_MS = 50;
const RETRY_GROWTH = 4;
const MAX_RETRY_TIMEOUTS = 4;
// BullMQ serves its wait list before any prioritized job: an attempt that found a cap full comes
// back prioritized, behind every fresh attempt, so a host's or customer's backlog never delays others'.
const OVER_CAP_PRIORITY = 1;

/**
 * Takes the attempt's place under its receiver host's cap (host and port, lower case) and its
 * customer's. Over either: the job goes back to delayed (DelayedError, as BullMQ wants), its worker
 * slot free meanwhile, and returns behind every fresh attempt (OVER_CAP_PRIORITY); it is never
 * delayed past the last moment its window allows a start, so that run records `stale_claim`
 * without sending. Redis trouble here does not stop delivery: the attempt runs without a place
 * (logged).
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
  let answer: Awaited<ReturnType<DeliveryCaps["take"]>>;
  try {
    answer = await caps.take(host, to.customer, attempt);
  } catch (error) {
    deps.logger.warn("delivery cap check failed; attempt runs without it", { task_id: job.data.taskId, err: error });
    return NO_PLACE;
  }
  if (answer === "taken") return placeOf(deps, caps, host, to.customer, attempt);
  recordWebhookDelay(deps.metrics, "cap", answer);
  if (job.priority !== OVER_CAP_PRIORITY) await job.changePriority({ priority: OVER_CAP_PRIORITY });
  await job.moveToDelayed(retryAt(deps, job.attemptsStarted, to.windowEndsAt), token);
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

/** When an attempt over a cap asks again: the growing delay with jitter, at most to the window's last start. */
function retryAt(deps: DeliveryDeps, tries: number, windowEndsAt: Date): number {
  const delayMs = Math.min(FIRST_RETRY_MS * RETRY_GROWTH ** Math.min(Math.max(0, tries - 1), 8), MAX_RETRY_TIMEOUTS * deps.config.webhookTimeoutMs);
  const now = deps.now().getTime();
  const lastStart = windowEndsAt.getTime() - deps.config.webhookTimeoutMs + 1;
  return Math.min(now + delayMs * (0.5 + Math.random()), Math.max(now, lastStart));
}

/** The receiver's host and port, lower case; null if the URL is unparsable (the sender then fails it). */
function hostOf(url: string): string | null {
  try {
    return new URL(url).host.toLowerCase() || null;
  } catch {
    return null;
  }
}
