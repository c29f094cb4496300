import type { Queue } from "bullmq";
import type { Database } from "@gen/db";
import { webhookJobId, type RedisClient, type WebhookJobData } from "@gen/queues";
import { median, percentile } from "./load.ts";

/** What the runner saw of one task's hand-off (epoch ms): the terminal statement sent and answered, attempt 1 enqueued. */
export interface HandOffTimes {
  committing: number;
  committed: number;
  enqueued: number;
}

const STAGES = ["commit", "enqueue", "pickup", "claim", "send"] as const;
type Stage = (typeof STAGES)[number];

/**
 * Where dispatch latency goes, per task, read after the run so nothing is added to the measured
 * path: the terminal statement (runner: pool, statement, commit), the enqueue of attempt 1
 * (runner), BullMQ's pickup (the job's `processedOn`, i.e. moveToActive of its last run), the
 * worker up to the claim (decision read, cap place, claim: `webhook_attempts.started_at`), and the
 * claim to the POST at the receiver (render, send). `ats` > 1 means the job was started more than
 * once: delayed over a cap, then run again. Returns one line for a figure's note.
 */
export async function dispatchStages(
  db: Database,
  redis: RedisClient,
  queue: Queue<WebhookJobData>,
  ids: string[],
  times: Map<string, HandOffTimes>,
  arrivals: (id: string) => number,
): Promise<string> {
  const claims = new Map<string, number>();
  const { rows } = await db.$sql.query<{ task_id: string; started_at: Date }>(
    "SELECT task_id, started_at FROM webhook_attempts WHERE attempt_no = 1 AND task_id = ANY($1)",
    [ids],
  );
  for (const row of rows) claims.set(row.task_id, row.started_at.getTime());
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hmget(queue.toKey(webhookJobId(id, 1)), "processedOn", "ats");
  const jobs = ((await pipeline.exec()) ?? []).map(([, value]) => value as [string | null, string | null]);
  const spans: Record<Stage, number[]> = { commit: [], enqueue: [], pickup: [], claim: [], send: [] };
  let delayed = 0;
  ids.forEach((id, i) => {
    const t = times.get(id)!;
    const [processedOn, ats] = jobs[i] ?? [null, null];
    const claim = claims.get(id);
    if (Number(ats ?? 0) > 1) delayed++;
    spans.commit.push(t.committed - t.committing);
    spans.enqueue.push(t.enqueued - t.committed);
    if (claim === undefined || processedOn === null) return;
    spans.pickup.push(Number(processedOn) - t.enqueued);
    spans.claim.push(claim - Number(processedOn));
    spans.send.push(arrivals(id) - claim);
  });
  const stages = STAGES.map((stage) => `${stage} ${spans[stage].length === 0 ? "-" : `${median(spans[stage])}/${percentile(spans[stage], 99)}`}`).join(", ");
  return `stages p50/p99 ms: ${stages}; delayed over a cap: ${delayed}`;
}
