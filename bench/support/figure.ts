export interface Figure {
  name: string;
  value: number;
  unit: string;
  baseline?: number;
  ratio?: number;
  target?: string;
  pass?: boolean;
  note?: string;
  /** CPU milliseconds per unit of work (request, delivery, task) per process, from /proc. */
  cpu?: CpuColumns;
  /**
   * The CPU per unit of work of the processes under test, PostgreSQL (this run's backends) and
   * Redis, in units of the same run's bare Express POST (set by withUnits).
   */
  units?: number;
  /** A target on `units`: withUnits sets `pass` from it (and from any `pass` already given). */
  unitsTarget?: number;
}

/**
 * Where a unit of work's CPU goes. On a machine shared with other work, throughput moves with the
 * neighbours and CPU per unit does not, so these are the steadier figures.
 */
export interface CpuColumns {
  /** The processes under test (gateway, worker, a baseline script), by name. */
  subject: Record<string, number>;
  /** The backends connected to this run's database. */
  postgres: number;
  /** Every postgres process on the server (postmaster, its helpers, other work's backends): an upper bound. */
  postgresAll: number;
  /** The Redis server (shared with other work: an upper bound). */
  redis: number;
  /** The baseline's own process (bare Express, the got loop), per unit of its own work. */
  baseline?: number;
}

/** Group names sampleCpu is given next to the subject's: see BenchContext.sharedGroups. */
const SHARED_GROUPS = ["postgres", "postgres_all", "redis"] as const;

/** Splits per-unit CPU by group (subject groups, then the shared ones) into a figure's columns. */
export function cpuColumns(perUnit: Record<string, number>, baseline?: number): CpuColumns {
  const subject = Object.fromEntries(Object.entries(perUnit).filter(([name]) => !(SHARED_GROUPS as readonly string[]).includes(name)));
  return { subject, postgres: perUnit.postgres ?? Number.NaN, postgresAll: perUnit.postgres_all ?? Number.NaN, redis: perUnit.redis ?? Number.NaN, baseline };
}

/** CPU ms per unit of work of the subject's processes, this run's PostgreSQL backends and Redis. */
function cpuTotal(cpu: CpuColumns): number {
  const shared = [cpu.postgres, cpu.redis].filter((ms) => !Number.isNaN(ms));
  return [...Object.values(cpu.subject), ...shared].reduce((sum, ms) => sum + ms, 0);
}

/** Every figure with CPU columns also in units of the same run's bare Express POST (CPU ms per POST). */
export function withUnits(figures: Figure[], barePostCpuMs: number): Figure[] {
  return figures.map((f) => {
    if (!f.cpu) return f;
    const units = cpuTotal(f.cpu) / barePostCpuMs;
    return f.unitsTarget === undefined ? { ...f, units } : { ...f, units, pass: (f.pass ?? true) && units <= f.unitsTarget };
  });
}

const fmt = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "" : n >= 100 ? n.toFixed(0) : n.toFixed(n >= 10 ? 1 : 2));

export function table(figures: Figure[]): string {
  const rows = figures.map((f) => [
    f.name,
    `${fmt(f.value)} ${f.unit}`,
    f.baseline === undefined ? "" : `${fmt(f.baseline)} ${f.unit}`,
    f.ratio === undefined ? "" : f.ratio.toFixed(2),
    f.target ?? "",
    f.pass === undefined ? "" : f.pass ? "pass" : "MISS",
    f.cpu
      ? Object.entries(f.cpu.subject)
          .map(([name, ms]) => `${name} ${fmt(ms)}`)
          .join(" + ")
      : "",
    fmt(f.cpu?.postgres),
    fmt(f.cpu?.postgresAll),
    fmt(f.cpu?.redis),
    fmt(f.cpu?.baseline),
    fmt(f.units),
  ]);
  const head = ["figure", "value", "baseline", "ratio", "target", "", "CPU ms/unit: subject", "pg", "pg all", "redis", "baseline proc", "units"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
