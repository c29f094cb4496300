import type { Queue } from "bullmq";
import type { Config } from "@gen/config";
import type { Database } from "@gen/db";
import type { Logger } from "@gen/logger";
import type { Metrics } from "@gen/metrics";
import type { HostSlots, WebhookJobData } from "@gen/queues";
import type { WebhookSender } from "@gen/webhook-sender";
import type { RenderBody } from "./render-body.ts";

export interface DeliveryDeps {
  config: Config;
  db: Database;
  logger: Logger;
  webhookQueue: Queue<WebhookJobData>;
  sender: WebhookSender;
  render: RenderBody;
  now: () => Date;
  /** `webhook_attempts_total` and `webhook_dispatch_seconds`; absent in processes without metrics. */
  metrics?: Metrics;
  /** Fleet-wide tickets per receiver host; absent: no per-host cap (unit tests of the schedule). */
  hostSlots?: HostSlots;
  /** Which queue this handler serves: attempts of hosts that keep timing out run in the slow one. */
  lane: "main" | "slow";
  /** Where the main lane moves attempts of such hosts (and where promoted slow-lane waiters are). */
  slowQueue?: Queue<WebhookJobData>;
}
