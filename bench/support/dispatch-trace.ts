// Diagnostics of the dispatch stretches, `BENCH_TRACE=1` only: where a
// slow finish's time goes in the runner (ticket, pool, the statement's round trip, after its answer),
// the runner's event-loop utilisation and delay, its GC pauses (and which slow finishes they
// overlap), run-queue waits per process (/proc/<pid>/task/*/schedstat: time runnable but not on a
// CPU), the machine's idle and steal, and PostgreSQL's WAL writes and syncs (pg_stat_wal). Off by
// default: the event-loop monitor's timer and the pg client's wrapper are work of their own.
import { readFileSync, readdirSync } from "node:fs";
import { monitorEventLoopDelay, performance as perf, PerformanceObserver } from "node:perf_hooks";
import pg from "pg";
import { median, percentile } from "./load.ts";

export const tracing = process.env.BENCH_TRACE === "1";

/** Per task id: when the closing statement went to the pg client and when its answer resolved. */
const queryTimes = new Map<string, { sent: number; answered: number }>();

if (tracing) {
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as { text?: string; values?: unknown[] } | undefined;
    const result = original.apply(this, args);
    if (config && typeof config === "object" && config.text?.includes("first_claimed") && result instanceof Promise) {
      const id = String(config.values?.[1]);
      const sent = performance.now();
      void result.then(
        () => queryTimes.set(id, { sent, answered: performance.now() }),
        () => undefined,
      );
    }
    return result;
  } as typeof pg.Client.prototype.query;
}

function runDelayNs(pid: number): number {
  let total = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const fields = readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").trim().split(" ");
      total += Number(fields[1]);
    }
  } catch {
    // gone
  }
  return total;
}

function stealTicks(): number[] {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return cpu;
}

/** Starts tracing a stretch; the returned function summarises it against per-task times. */
export function traceStretch(groups: Record<string, () => number[]>) {
  const eld = monitorEventLoopDelay({ resolution: 5 });
  eld.enable();
  const gcs: { start: number; duration: number; kind: number }[] = [];
  const heap0 = process.memoryUsage().heapUsed;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      gcs.push({ start: entry.startTime, duration: entry.duration, kind: (entry as { detail?: { kind?: number } }).detail?.kind ?? 0 });
  });
  observer.observe({ entryTypes: ["gc"] });
  const delay0 = Object.fromEntries(Object.entries(groups).map(([name, pids]) => [name, pids().reduce((s, p) => s + runDelayNs(p), 0)]));
  const stat0 = stealTicks();
  const elu0 = perf.eventLoopUtilization();
  queryTimes.clear();
  return (tasks: { id: string; committing: number; ticketed: number; committed: number }[], toPerf: (epochMs: number) => number): string => {
    eld.disable();
    const elu = perf.eventLoopUtilization(elu0);
    observer.disconnect();
    const stat1 = stealTicks();
    const d = stat1.map((v, i) => v - stat0[i]!);
    const total = d.reduce((a, b) => a + b, 0);
    const delays = Object.entries(groups)
      .map(([name, pids]) => `${name} ${((pids().reduce((s, p) => s + runDelayNs(p), 0) - delay0[name]!) / 1e6 / tasks.length).toFixed(2)}`)
      .join(", ");
    const ticket = tasks.map((t) => t.ticketed - t.committing);
    const acquire: number[] = [];
    const roundTrip: number[] = [];
    const after: number[] = [];
    let slow = 0;
    let slowWithGc = 0;
    let slowGcMs = 0;
    const slowParts: string[] = [];
    for (const t of tasks) {
      const q = queryTimes.get(t.id);
      if (!q) continue;
      const ticketedPerf = toPerf(t.ticketed);
      acquire.push(q.sent - ticketedPerf);
      roundTrip.push(q.answered - q.sent);
      after.push(toPerf(t.committed) - q.answered);
      if (t.committed - t.committing > 15) {
        slow++;
        const overlap = gcs.filter((g) => g.start < q.answered && g.start + g.duration > ticketedPerf).reduce((s, g) => s + g.duration, 0);
        if (overlap > 0) slowWithGc++;
        slowGcMs += overlap;
        if (slowParts.length < 12)
          slowParts.push(
            `${Math.round(t.ticketed - t.committing)}+${Math.round(q.sent - ticketedPerf)}+${Math.round(q.answered - q.sent)}+${Math.round(toPerf(t.committed) - q.answered)}${overlap > 0 ? `(gc ${overlap.toFixed(1)})` : ""}`,
          );
      }
    }
    const pp = (xs: number[]) => (xs.length === 0 ? "-" : `${median(xs.map(Math.round))}/${percentile(xs.map(Math.round), 99)}/${Math.round(Math.max(...xs))}`);
    const gcTotal = gcs.reduce((s, g) => s + g.duration, 0);
    const gcMax = Math.max(0, ...gcs.map((g) => g.duration));
    return [
      `trace: ticket ${pp(ticket)}, acquire ${pp(acquire)}, statement round trip ${pp(roundTrip)}, after answer ${pp(after)} (p50/p99/max ms)`,
      `event loop utilisation ${(elu.utilization * 100).toFixed(0)}%, eld p50 ${(eld.percentile(50) / 1e6).toFixed(1)} p99 ${(eld.percentile(99) / 1e6).toFixed(1)} max ${(eld.max / 1e6).toFixed(1)} ms`,
      `gc ${gcs.length} events, ${gcTotal.toFixed(0)} ms total, max ${gcMax.toFixed(1)} ms; by kind (1 minor, 2 major, 4 incremental, 8 weak callbacks): ${[
        1, 2, 4, 8,
      ]
        .map((kind) => {
          const of = gcs.filter((g) => g.kind === kind);
          return `${kind}: ${of.length} / ${of.reduce((sum, g) => sum + g.duration, 0).toFixed(0)} ms / max ${Math.max(0, ...of.map((g) => g.duration)).toFixed(1)}`;
        })
        .join(", ")}; heap used ${(heap0 / 1e6).toFixed(0)} -> ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`,
      `slow (>15 ms commit stage) ${slow}, ${slowWithGc} overlapping a GC (${slowGcMs.toFixed(0)} ms); ticket+acquire+rtt+after: ${slowParts.join(" ")}`,
      `run-queue wait ms per task: ${delays}; cpu% user ${((100 * d[0]!) / total).toFixed(0)} sys ${((100 * d[2]!) / total).toFixed(0)} idle ${((100 * d[3]!) / total).toFixed(0)} steal ${((100 * (d[7] ?? 0)) / total).toFixed(1)}`,
    ].join("\n    ");
  };
}
