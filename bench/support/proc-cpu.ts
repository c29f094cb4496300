// CPU time of processes from /proc/<pid>/stat (Linux): user + system time, before and after a
// measured stretch, so a figure can say how many CPU milliseconds each process spent per unit of work.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** Fields of /proc/<pid>/stat after the command name (which may contain spaces and parentheses). */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/**
 * CPU milliseconds a process has used: utime + stime, plus cutime + cstime (its waited-for
 * children, so a PostgreSQL backend that exits during the stretch still counts in the postmaster).
 * 0 for a process that is gone.
 */
function cpuMs(pid: number): number {
  const fields = statFields(pid);
  if (!fields) return 0;
  // After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
  const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  return (ticks * 1000) / clockTicks();
}

/** Every process whose command name is `name` (e.g. all "postgres" processes: postmaster and backends). */
export function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === name) pids.push(Number(entry));
    } catch {
      // Exited while we looked.
    }
  }
  return pids;
}

/**
 * The PostgreSQL backends serving one database: their command line (`postgres: ... <user> <db>
 * <client> <state>`) names it, so on a server shared with other work only this run's connections
 * count. The upper bound (every postgres process) is `pidsNamed("postgres")`.
 */
export function postgresBackendsOf(database: string): number[] {
  return pidsNamed("postgres").filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(` ${database} `);
    } catch {
      return false;
    }
  });
}

/** A process and its children, recursively (a GATEWAY_PROCESSES cluster: the primary and its children). */
export function withDescendants(pid: number): number[] {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${pids[i]}/task`)) {
        const children = readFileSync(`/proc/${pids[i]}/task/${task}/children`, "utf8").trim();
        if (children !== "") pids.push(...children.split(" ").map(Number));
      }
    } catch {
      // Exited while we looked.
    }
  }
  return pids;
}

/** A named group of processes, read again at every sample (a group's members may change). */
export type ProcessGroup = () => number[];

export interface CpuSample {
  /** CPU milliseconds per group over the stretch. */
  ms: Record<string, number>;
  /** Wall-clock milliseconds of the stretch. */
  wallMs: number;
}

/**
 * Samples the CPU time of named process groups: `const stop = sampleCpu(groups)` before the work,
 * `const sample = stop()` after. A process that started during the stretch counts from zero; one
 * that exited counts only if its parent is in the group (PostgreSQL backends and the postmaster).
 */
export function sampleCpu(groups: Record<string, ProcessGroup>): () => CpuSample {
  const start = new Map<string, Map<number, { ms: number; ppid: number }>>();
  for (const [name, pids] of Object.entries(groups))
    start.set(name, new Map(pids().map((pid) => [pid, { ms: cpuMs(pid), ppid: Number(statFields(pid)?.[1] ?? 0) }])));
  const startedAt = performance.now();
  return () => {
    const ms: Record<string, number> = {};
    for (const [name, pids] of Object.entries(groups)) {
      const before = start.get(name)!;
      const now = new Map(pids().map((pid) => [pid, cpuMs(pid)]));
      let total = 0;
      for (const [pid, value] of now) total += value - (before.get(pid)?.ms ?? 0);
      // A process gone since the start counts only through its parent's cutime/cstime, which
      // holds its whole life: take off what it had used before the stretch. Without its parent in
      // the group (an idle pooled connection's backend timing out), what it used in the stretch is lost.
      for (const [pid, { ms: value, ppid }] of before) if (!now.has(pid) && (now.has(ppid) || before.has(ppid))) total -= value;
      ms[name] = Math.max(0, total);
    }
    return { ms, wallMs: performance.now() - startedAt };
  };
}

/** "worker 1.23, postgres 0.45, redis 0.10 ms" per unit of work. */
export function cpuPerUnit(sample: CpuSample, units: number): string {
  return Object.entries(sample.ms)
    .map(([name, ms]) => `${name} ${(ms / units).toFixed(2)}`)
    .join(", ")
    .concat(" ms CPU each");
}

/**
 * CPU samples of the same groups over several stretches (rounds), summed, so a figure divides the
 * total CPU by the total units of work rather than taking a median of noisy per-round ratios.
 */
export class CpuTally {
  private readonly ms: Record<string, number> = {};
  private units = 0;

  add(sample: CpuSample, units: number): void {
    for (const [name, ms] of Object.entries(sample.ms)) this.ms[name] = (this.ms[name] ?? 0) + ms;
    this.units += units;
  }

  /** CPU milliseconds per unit of work, per group. */
  perUnit(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.ms).map(([name, ms]) => [name, this.units === 0 ? Number.NaN : ms / this.units]));
  }
}

/**
 * CPU milliseconds the whole machine has spent busy (all CPUs: user, nice, system, irq, softirq,
 * steal from /proc/stat), so a figure can say how much of the machine other work took meanwhile.
 */
export function machineBusyMs(): number {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return ((user! + nice! + system! + irq! + softirq! + (steal ?? 0)) * 1000) / clockTicks();
}

/**
 * Times the process's main thread went to sleep and was woken again (`voluntary_ctxt_switches` of
 * /proc/<pid>/status): an event loop's wake-ups, which on these VMs cost more than the work they
 * wake it for (bench/wake-cost.ts). 0 for a process that is gone.
 */
export function wakeUps(pid: number): number {
  try {
    return Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
