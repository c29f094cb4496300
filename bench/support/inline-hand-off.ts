import type { Config } from "@gen/config";
import type { ClosedTask, Database } from "@gen/db";
import { TaskStatus } from "@gen/domain";
import { settleTask } from "@gen/ledger";
import type { Logger } from "@gen/logger";
import { QUEUE_NAMES, createQueue, type RedisClient, type WebhookJobData } from "@gen/queues";
import { prepareHandOff, type HandOffDeps } from "@gen/webhook-delivery";
import type { Queue } from "bullmq";
import { deliveryLockMs } from "../../apps/worker/src/delivery/create-delivery-worker.ts";
import { createDeliveryHostSlots } from "../../apps/worker/src/delivery/delivery-host-slots.ts";
import type { GateDeps } from "../../apps/worker/src/delivery/host-gate.ts";
import { createInlineAttempts } from "../../apps/worker/src/delivery/inline-attempt.ts";
import { renderTaskBody } from "../../apps/worker/src/delivery/render-body.ts";
import { receiverSender } from "./receiver-sender.ts";

/** The host gate a generation worker routes attempt 1 through (its tickets, both lanes), with `config`'s settings. */
export function handOffGate(
  config: Config,
  redis: RedisClient,
  webhookQueue: Queue<WebhookJobData>,
  logger: Logger,
): GateDeps & { redis: RedisClient; close(): Promise<void> } {
  const slowQueue = createQueue<WebhookJobData>(QUEUE_NAMES.webhookSlow, redis, config.queuePrefix);
  return {
    hostSlots: createDeliveryHostSlots(redis, config),
    webhookQueue,
    slowQueue,
    logger,
    config,
    redis,
    now: () => new Date(),
    close: () => slowQueue.close(),
  };
}

/**
 * The generation worker's hand-off of attempt 1 as createDeliveryWorker().handOff builds it, with its
 * prepare step (the ticket taken alongside the terminal statement): routed by the host tickets and,
 * with a ticket, run in this process (claim, render, POST, finish) to the bench's receiver, whose
 * names and CA the sender is given (`faultHosts`, `ca`).
 */
export function inlineHandOff(
  gate: GateDeps & { redis: RedisClient; close(): Promise<void> },
  db: Database,
  faultHosts: string,
  ca: string,
): { handOff: HandOffDeps; close(): Promise<void> } {
  const { config, webhookQueue, logger } = gate;
  const sender = receiverSender(config, faultHosts, ca);
  const inline = createInlineAttempts(
    { ...gate, db, sender, render: renderTaskBody, lane: "main" },
    { bound: config.deliveryConcurrency, leaseMs: deliveryLockMs(config), redis: gate.redis },
  );
  return {
    handOff: { webhookQueue, logger, handOffWebhook: inline.handOff, prepareHandOff: inline.prepare },
    async close() {
      await inline.close();
      sender.close();
      await gate.close();
    },
  };
}

/**
 * The generation worker's terminal step (process-generation.ts `finish`) for a bench task (4 credits
 * reserved and charged): the receiver's ticket asked for alongside the settlement, which claims
 * attempt 1 when it came, then the hand-off. `committed`: when the terminal statement answered.
 */
export async function settleAndHandOff(
  db: Database,
  handOff: HandOffDeps,
  id: string,
  webhookUrl: string,
  userId: string,
): Promise<{ settled: ClosedTask | null; committed: number; ticketed: number }> {
  const prepared = prepareHandOff(handOff, { id, userId, webhookUrl });
  const output = { image_urls: [`https://cdn.bench.example/${id}/0.png`] };
  const claimFirst = await prepared.claimFirst();
  const ticketed = Date.now();
  const settled = await settleTask(db, { id, reservedCredits: 4 }, { status: TaskStatus.Completed, output, charge: 4 }, claimFirst);
  const committed = Date.now();
  await (settled ? prepared.settled(settled) : prepared.abandoned());
  return { settled, committed, ticketed };
}
