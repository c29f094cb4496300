import type { Job } from "bullmq";
import { DelayedError } from "bullmq";
import { ensureAttemptJob, type WebhookJobData } from "@gen/queues";
import type { AttemptResult } from "./attempt-result.ts";
import type { DeliveryDeps } from "./delivery-deps.ts";

/** A slot held for one attempt; `release` is called once the attempt is over. */
export interface HeldSlot {
  release(result: AttemptResult): void;
}

const NO_SLOT: HeldSlot = { release: () => undefined };
// A denied attempt asks again after about as long as the host's oldest attempt in flight has run
// (jittered; at least MIN_RETRY_MS, at most a timeout), and after half to one timeout in the slow
// lane. A fast receiver at its cap frees slots within milliseconds, so its attempts barely wait
// (a wait doubling per denial cut one busy receiver's deliveries to a quarter); a hanging one frees
// them only at its timeout, so its waiting jobs ask less and less often. The window bounds every wait.
const MIN_RETRY_MS = 20;

/** The receiver a URL's slots are counted under (host and port, lower case); null if unparsable. */
export function receiverHost(url: string): string | null {
  try {
    return new URL(url).host.toLowerCase() || null;
  } catch {
    return null;
  }
}

/**
 * Asks for a slot of the attempt's receiver host (one Redis round trip). Granted: the attempt goes
 * on. At the host's cap: the job goes back to delayed, no later than the last moment the attempt
 * can still start inside its window, and its worker slot is free for other receivers' attempts
 * (throws DelayedError, as BullMQ wants). A host that keeps timing out, seen from the main lane:
 * the job moves to the slow lane and this one ends. Redis trouble here does not stop delivery:
 * the attempt runs without a slot (logged).
 */
export async function enterHostGate(deps: DeliveryDeps, job: Job<WebhookJobData>, token: string | undefined, url: string, latestStart: Date): Promise<HeldSlot | "moved"> {
  const slots = deps.hostSlots;
  const host = receiverHost(url);
  if (!slots || host === null || token === undefined || job.id === undefined) return NO_SLOT;
  const member = `${job.id}:${token}`;
  let answer;
  try {
    answer = await slots.acquire(host, member, deps.lane);
  } catch (error) {
    deps.logger.warn("host slot check failed; attempt runs without it", { task_id: job.data.taskId, err: error });
    return NO_SLOT;
  }
  if (answer === "granted") {
    return {
      release(result) {
        const outcome = !result.ok && result.lastError === "timeout" ? "timeout" : result.status !== null ? "answered" : "other";
        slots.release(host, member, outcome).catch((error: unknown) => deps.logger.warn("host slot release failed; its lease expires", { err: error }));
      },
    };
  }
  if (answer === "slow" && deps.slowQueue) {
    await ensureAttemptJob(deps.slowQueue, job.data.taskId, job.data.attempt);
    return "moved";
  }
  const now = deps.now().getTime();
  const oldestRunningMs = typeof answer === "object" ? answer.oldestRunningMs : deps.config.webhookTimeoutMs;
  // In the slow lane a slot frees about once per timeout / cap: asking sooner only burns queue turns.
  const ceiling = deps.lane === "slow" ? deps.config.webhookTimeoutMs : Math.min(Math.max(MIN_RETRY_MS, oldestRunningMs), deps.config.webhookTimeoutMs);
  const wait = ceiling * (0.5 + Math.random() / 2);
  const retryAt = Math.max(now + MIN_RETRY_MS, Math.min(now + wait, latestStart.getTime()));
  await job.moveToDelayed(retryAt, token);
  throw new DelayedError();
}
