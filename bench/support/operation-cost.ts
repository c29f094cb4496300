import { sampleCpu, type ProcessGroup } from "./proc-cpu.ts";

/** CPU milliseconds per unit of one operation: this process, PostgreSQL and Redis (from /proc), and its rate. */
export interface OperationCost {
  operation: string;
  client_ms: number;
  postgres_ms: number;
  redis_ms: number;
  per_second: number;
}

/** Runs `work` (which does `units` units of `operation`) between two CPU samples of this process and the `postgres` and `redis` groups. */
export async function measureOperation(
  operation: string,
  units: number,
  groups: { postgres: ProcessGroup; redis: ProcessGroup },
  work: () => Promise<void>,
): Promise<OperationCost> {
  const before = process.cpuUsage();
  const stop = sampleCpu(groups);
  await work();
  const sample = stop();
  const client = process.cpuUsage(before);
  return {
    operation,
    client_ms: (client.user + client.system) / 1000 / units,
    postgres_ms: sample.ms.postgres! / units,
    redis_ms: sample.ms.redis! / units,
    per_second: (units / sample.wallMs) * 1000,
  };
}

/** The rows as a plain-text table, then `footer`. */
export function printCosts(rows: OperationCost[], footer: string): void {
  const width = Math.max(...rows.map((r) => r.operation.length));
  process.stdout.write(`\n${"operation".padEnd(width)}  client ms  PostgreSQL ms  Redis ms  per second\n`);
  for (const r of rows)
    process.stdout.write(
      `${r.operation.padEnd(width)}  ${r.client_ms.toFixed(3).padStart(9)}  ${r.postgres_ms.toFixed(3).padStart(13)}  ${r.redis_ms.toFixed(3).padStart(8)}  ${r.per_second.toFixed(0).padStart(10)}\n`,
    );
  process.stdout.write(`\n${footer}\n`);
}
