import type { Arrival } from "./receiver-child.ts";
import { startChild } from "./child.ts";

/** The bench's HTTPS receiver, run in its own process (receiver-child.ts), as the figures see it. */
export interface BenchReceiver {
  /** The webhook_url to submit (a name only the app processes and the bench's senders map to loopback). */
  url: string;
  /** `url` and one more per alias: the same receiver under other host names (one per customer, say). */
  urls: string[];
  /** Environment for app processes: name mapping, allow list, and trust in the receiver's CA. */
  childEnv: Record<string, string>;
  /** The receiver's CA certificate (PEM), for a sender in the bench process. */
  ca: string;
  /** POSTs per task id, in arrival order: `at` is when the receiver got it (epoch ms, its clock is this one). */
  posts: Map<string, { at: number; status: number }[]>;
  /** The receiver process, for its CPU time. */
  pid: number;
  /**
   * How often arrivals are reported (default 2 ms). Longer while this process stands in for the
   * generation worker: every report wakes its event loop; the arrival times are the receiver's own.
   */
  reportEvery(ms: number): void;
  close(): Promise<void>;
}

/** Starts the receiver process with `aliases` more host names; arrivals reach `posts` within a few ms. */
export async function startReceiverProcess(aliases: number): Promise<BenchReceiver> {
  const child = await startChild("bench/support/receiver-child.ts", { RECEIVER_ALIASES: String(aliases) });
  // Never leave the receiver behind (it holds :443 and the terminal's pipes).
  const killOnExit = () => child.child.kill("SIGTERM");
  process.once("exit", killOnExit);
  const ready = (await child.message) as Pick<BenchReceiver, "url" | "urls" | "childEnv" | "ca">;
  const posts: BenchReceiver["posts"] = new Map();
  child.child.on("message", (message) => {
    const { arrivals } = message as { arrivals?: Arrival[] };
    for (const [taskId, at, status] of arrivals ?? []) {
      const list = posts.get(taskId);
      if (list) list.push({ at, status });
      else posts.set(taskId, [{ at, status }]);
    }
  });
  return {
    ...ready,
    posts,
    pid: child.child.pid!,
    reportEvery: (ms) => void child.child.send({ batchMs: ms }),
    async close() {
      process.off("exit", killOnExit);
      await child.stop();
    },
  };
}
