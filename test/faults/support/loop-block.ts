import { readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

export interface LoopBlocks {
  /** Longest time the event loop did not turn, wall clock (includes time the OS ran others). */
  wallMs: number;
  /** Most CPU this thread spent in one such stretch: the work that held the loop. */
  cpuMs: number;
}

const TICK_MS = 10;
// Linux reports thread CPU in clock ticks of 1/100 s (USER_HZ), so cpuMs is in steps of 10 ms.
const MS_PER_CLOCK_TICK = 10;

/** utime + stime of the calling thread, in ms. */
function threadCpuMs(): number {
  const stat = readFileSync("/proc/thread-self/stat", "latin1");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 of proc(5), counted from the state (field 3) here.
  return (Number(fields[11]) + Number(fields[12])) * MS_PER_CLOCK_TICK;
}

/**
 * Watches this thread's event loop until `stop()`. On a machine shared with other work the wall
 * figure also counts time this process was not scheduled; the CPU figure does not, which makes
 * it the one to guard on.
 */
export function watchLoopBlocks(): { stop(): LoopBlocks } {
  const delay = monitorEventLoopDelay({ resolution: TICK_MS });
  delay.enable();
  let cpuMs = 0;
  let lastCpu = threadCpuMs();
  const timer = setInterval(() => {
    const now = threadCpuMs();
    cpuMs = Math.max(cpuMs, now - lastCpu);
    lastCpu = now;
  }, TICK_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      delay.disable();
      return { wallMs: delay.max / 1e6, cpuMs };
    },
  };
}
