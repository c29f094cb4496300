import { countOutcomesPerMinute, type Database } from "@gen/db";
import { outcomeCategory, type OutcomeCategory } from "./outcome-category.ts";

type OutcomeCounts = Partial<Record<OutcomeCategory, number>>;

export interface DeliveryStats {
  /** Start of the first minute (inclusive), ISO 8601 UTC. */
  from: string;
  /** End of the last minute (exclusive); the last minute is the current, partial one. */
  to: string;
  /** One entry per minute, oldest first, every minute present; `outcomes` omits zero counts. */
  minutes: Array<{ minute: string; outcomes: OutcomeCounts }>;
  totals: OutcomeCounts;
}

const STATS_MINUTES = 60;
const MINUTE_MS = 60_000;

/** Attempts finished per minute over the last hour, by chart category (one grouped query). */
export async function loadDeliveryStats(db: Database, now: Date): Promise<DeliveryStats> {
  const end = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  const start = end - STATS_MINUTES * MINUTE_MS;
  const rows = await countOutcomesPerMinute(db, new Date(start), new Date(end));
  const buckets = Array.from({ length: STATS_MINUTES }, (): OutcomeCounts => ({}));
  const totals: OutcomeCounts = {};
  for (const row of rows) {
    const bucket = buckets[Math.floor((row.minute.getTime() - start) / MINUTE_MS)];
    if (!bucket || row.outcome === null) continue;
    const category = outcomeCategory(row.outcome);
    bucket[category] = (bucket[category] ?? 0) + row.count;
    totals[category] = (totals[category] ?? 0) + row.count;
  }
  return {
    from: new Date(start).toISOString(),
    to: new Date(end).toISOString(),
    minutes: buckets.map((outcomes, index) => ({ minute: new Date(start + index * MINUTE_MS).toISOString(), outcomes })),
    totals,
  };
}
