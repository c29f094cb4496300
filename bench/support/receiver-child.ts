// The bench's HTTPS receiver (one process, 8 host names) in a process of its own, so a driver's CPU
// is the sender's without the receiving side of every POST (bench/dispatch-cost.ts). Its first IPC
// message is what a sender needs (URLs, name mapping, CA); then it answers every message with the
// number of POSTs received so far.
import { readFileSync } from "node:fs";
import { startHookReceiver } from "../../test/faults/support/hook-receiver.ts";

const receiver = await startHookReceiver(undefined, undefined, Number(process.env.RECEIVER_ALIASES ?? 7));
process.send!({ url: receiver.url, urls: receiver.urls, childEnv: receiver.childEnv, ca: readFileSync(receiver.childEnv.NODE_EXTRA_CA_CERTS!, "utf8") });
process.on("message", () => process.send!({ total: receiver.total() }));
process.once("SIGTERM", () => void receiver.close().finally(() => process.exit(0)));
