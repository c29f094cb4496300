// The bench's HTTPS receiver (one process, RECEIVER_ALIASES + 1 host names) in a process of its
// own: it stands for customers' servers, which never share a core's event loop with the process
// under test (before this, the bench process was both the generation worker's stand-in and every
// POST's receiving side). Its first IPC message is what a sender needs (URLs, name mapping, CA);
// then it reports arrivals (task id, time, status) in batches, a few milliseconds apart, so the
// parent's picture of who got what lags by at most that and costs one message per batch, not per POST.
// The parent may stretch that interval (a `{ batchMs }` message): during a dispatch stretch, where
// it stands in for the generation worker, each report would be one more wake-up of its event loop
// per task or so, which no generation worker has.
import { readFileSync } from "node:fs";
import { startHookReceiver } from "../../test/faults/support/hook-receiver.ts";

/** Arrivals since the last report: task id, epoch ms, status answered. */
export type Arrival = [taskId: string, at: number, status: number];

let batchMs = 2;
let pending: Arrival[] = [];
let timer: NodeJS.Timeout | undefined;
const flush = () => {
  timer = undefined;
  const batch = pending;
  pending = [];
  process.send!({ arrivals: batch });
};
const receiver = await startHookReceiver(
  ({ taskId }) => {
    pending.push([taskId, Date.now(), 200]);
    timer ??= setTimeout(flush, batchMs);
    return { status: 200 };
  },
  undefined,
  Number(process.env.RECEIVER_ALIASES ?? 7),
);
process.send!({ url: receiver.url, urls: receiver.urls, childEnv: receiver.childEnv, ca: readFileSync(receiver.childEnv.NODE_EXTRA_CA_CERTS!, "utf8") });
process.on("message", (message: { batchMs?: number }) => {
  if (typeof message.batchMs !== "number") return;
  batchMs = message.batchMs;
  // A report due later than the new interval allows goes now.
  if (timer !== undefined) {
    clearTimeout(timer);
    flush();
  }
});
process.once("SIGTERM", () => void receiver.close().finally(() => process.exit(0)));
