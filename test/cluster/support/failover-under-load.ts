import type { FaultStack } from "../../faults/support/fault-stack.ts";
import type { HookReceiver } from "../../faults/support/hook-receiver.ts";
import { startLoad, until, type Sample } from "../../faults/support/load.ts";
import { expectNothingLost, summaryLine, waitSettled, type LossReport } from "../../faults/support/no-loss.ts";

export interface Failover {
  name: string;
  /** Triggers the failover and resolves once the topology has a writable primary again. */
  run(): Promise<void>;
}

export interface Interruption {
  name: string;
  /** Longest gap between two accepted submissions across the failover. */
  gapMs: number;
  /** The usual gap between accepted submissions just before it. */
  baselineMs: number;
  /** Submissions answered otherwise meanwhile: "status/code" → count. */
  refused: Record<string, number>;
}

const STEADY_MS = 3000;

/**
 * Steady submissions and polls (some webhooks refused once, so retries are waiting) through each
 * failover in turn; then everything must settle with nothing lost, nothing charged twice and the
 * ledger balanced. Returns how long each failover held up submissions.
 */
export async function failoverUnderLoad(
  stack: FaultStack,
  receiver: HookReceiver,
  failovers: Failover[],
  earlierTaskIds: string[],
): Promise<{ interruptions: Interruption[]; report: LossReport; settledMs: number; failedWebhooks: string[] }> {
  const { auth } = await stack.user();
  const load = startLoad(
    stack,
    auth,
    (i) => ({ model: "sim-detect-1", text: `load ${i}`, webhook_url: i % 4 === 0 ? `${receiver.url}&retry=1` : receiver.url }),
    4,
    50,
  );
  const interruptions: Interruption[] = [];
  try {
    for (const failover of failovers) {
      await new Promise((resolve) => setTimeout(resolve, STEADY_MS));
      const before = load.samples.length;
      const startedAt = Date.now();
      await failover.run();
      // Over once submissions are accepted again, with a little time to show any second dip.
      await until(
        async () => load.samples.some((s) => s.kind === "submit" && ok(s) && s.startedAt > Date.now() - 1000 && s.startedAt >= startedAt),
        120_000,
        `submissions accepted after ${failover.name}`,
      );
      await new Promise((resolve) => setTimeout(resolve, STEADY_MS));
      interruptions.push(measure(failover.name, load.samples.slice(Math.max(0, before - 200)), startedAt));
    }
  } finally {
    await load.stop();
  }
  const settleStarted = Date.now();
  await waitSettled(stack.db, 180_000);
  const settledMs = Date.now() - settleStarted;
  const report = await expectNothingLost(stack.db, receiver, [...earlierTaskIds, ...load.accepted]);
  expect(load.accepted.length).toBeGreaterThan(0);
  // Why any webhook ended `failed` (its attempts' outcomes), for the report.
  const failed = await stack.db.$sql.rows<{ line: string }>`
    SELECT a.task_id || ': ' || string_agg(a.attempt_no || '@+' || (extract(epoch FROM a.started_at - t.finished_at) * 1000)::int || 'ms ' || coalesce(a.outcome, 'open'), ', ' ORDER BY a.attempt_no) AS line
      FROM webhook_deliveries d JOIN tasks t ON t.id = d.task_id JOIN webhook_attempts a ON a.task_id = d.task_id
     WHERE d.status = 'failed' GROUP BY a.task_id`;
  const failedWebhooks = failed.map((f) => f.line);
  return { interruptions, report, settledMs, failedWebhooks };
}

const ok = (s: Sample) => s.status >= 200 && s.status < 300;

function measure(name: string, samples: Sample[], faultAt: number): Interruption {
  const submits = samples.filter((s) => s.kind === "submit");
  const done = submits
    .filter(ok)
    .map((s) => s.startedAt + s.ms)
    .sort((a, b) => a - b);
  const lastBefore = done.filter((t) => t <= faultAt);
  const after = done.filter((t) => t > faultAt);
  const series = [...lastBefore.slice(-1), ...after];
  let gapMs = 0;
  for (let i = 1; i < series.length; i++) gapMs = Math.max(gapMs, series[i]! - series[i - 1]!);
  const gaps = lastBefore
    .slice(1)
    .map((t, i) => t - lastBefore[i]!)
    .sort((a, b) => a - b);
  const refused: Record<string, number> = {};
  for (const s of submits) {
    if (ok(s) || s.startedAt + s.ms < faultAt) continue;
    const key = `${s.status}${s.code ? `/${s.code}` : ""}`;
    refused[key] = (refused[key] ?? 0) + 1;
  }
  return { name, gapMs, baselineMs: gaps[Math.floor(gaps.length / 2)] ?? 0, refused };
}

export function printFailovers(
  topology: string,
  { interruptions, report, settledMs, failedWebhooks }: { interruptions: Interruption[]; report: LossReport; settledMs: number; failedWebhooks: string[] },
): void {
  for (const i of interruptions) {
    const refused =
      Object.entries(i.refused)
        .map(([k, n]) => `${k} x${n}`)
        .join(", ") || "none";
    process.stdout.write(
      `[cluster] ${topology}, ${i.name}: submissions interrupted ${i.gapMs} ms (longest gap between accepted submissions; usual gap ${i.baselineMs} ms), refused meanwhile: ${refused}\n`,
    );
  }
  process.stdout.write(summaryLine(`${topology}, failovers under load`, report, settledMs).replace("[faults]", "[cluster]"));
  for (const line of failedWebhooks) process.stdout.write(`[cluster] ${topology}, webhook failed: ${line}\n`);
}
