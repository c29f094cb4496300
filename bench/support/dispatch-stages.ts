import type { Queue } from "bullmq";
import type { Database } from "@gen/db";
import { webhookJobId, type RedisClient, type WebhookJobData } from "@gen/queues";
import { median, percentile } from "./load.ts";

/**
 * What the runner saw of one task's hand-off (epoch ms): the finish started (the ticket asked for),
 * the terminal statement sent (the ticket answered, or its 25 ms wait over) and answered, attempt 1
 * enqueued.
 */
export interface HandOffTimes {
  committing: number;
  ticketed: number;
  committed: number;
  enqueued: number;
}

const STAGES = ["ticket", "commit", "enqueue", "pickup", "claim", "send"] as const;
type Stage = (typeof STAGES)[number];

/**
 * Where dispatch latency goes, per task, read after the run so nothing is added to the measured
 * path: the receiver's ticket asked for before the terminal statement (runner; before the task's
 * `finished_at`, so outside the dispatch figure), the terminal statement (runner: pool, statement,
 * commit), the enqueue of attempt 1 (runner), BullMQ's pickup (the
 * job's `processedOn`, i.e. moveToActive of its last run), the worker up to the claim (decision
 * read, host ticket, claim: `webhook_attempts.started_at`), and the claim to the POST at the receiver
 * (render, send). A job added with a delay was parked at the routed hand-off (its host had no
 * ticket free); `ats` > 1 means it was started more than once: parked by the worker's host gate at
 * pickup, then promoted. An attempt with no job ran inline (in the runner, as in the generation
 * worker): it has no pickup, its claim stage is hand-off return → claim (the claim is sent inside
 * the hand-off, so about 0) and its send stage includes the claim's round trip. An attempt claimed
 * by the terminal statement itself (the generation worker's finish with a ticket taken first) starts
 * at the task's finish, before the commit returned: it has no claim stage, its send stage runs from
 * the commit's return to the POST, and its ticket's round trip is the ticket stage. Returns
 * one line for a figure's note.
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
  for (const id of ids) pipeline.hmget(queue.toKey(webhookJobId(id, 1)), "processedOn", "ats", "opts");
  const jobs = ((await pipeline.exec()) ?? []).map(([, value]) => value as [string | null, string | null, string | null]);
  const spans: Record<Stage, number[]> = { ticket: [], commit: [], enqueue: [], pickup: [], claim: [], send: [] };
  let parked = 0;
  let parkedAtHandOff = 0;
  let inline = 0;
  let folded = 0;
  ids.forEach((id, i) => {
    const t = times.get(id)!;
    // The job's own `delay` field is zeroed by a promotion; its options keep the delay it was added with.
    const [processedOn, ats, opts] = jobs[i] ?? [null, null, null];
    const delay = opts === null ? 0 : Number((JSON.parse(opts) as { delay?: number }).delay ?? 0);
    const claim = claims.get(id);
    if (Number(ats ?? 0) > 1) parked++;
    if (processedOn !== null && delay > 0) parkedAtHandOff++;
    spans.ticket.push(t.ticketed - t.committing);
    spans.commit.push(t.committed - t.ticketed);
    spans.enqueue.push(t.enqueued - t.committed);
    if (claim === undefined) return;
    if (processedOn === null) inline++;
    else spans.pickup.push(Number(processedOn) - t.enqueued);
    if (processedOn === null && claim <= t.committed) {
      folded++;
      spans.send.push(arrivals(id) - t.committed);
      return;
    }
    spans.claim.push(claim - (processedOn === null ? t.enqueued : Number(processedOn)));
    spans.send.push(arrivals(id) - claim);
  });
  // A stage no attempt went through (pickup, when every attempt ran inline) shows as "-".
  const stages = STAGES.map((stage) => `${stage} ${spans[stage].length === 0 ? "-" : `${median(spans[stage])}/${percentile(spans[stage], 99)}`}`).join(", ");
  return `stages p50/p99 ms: ${stages}; ${inline} of ${ids.length} inline (${folded} claimed by the settlement); parked at the host gate: ${parkedAtHandOff} at the hand-off, ${parked} at pickup`;
}
