// Child-process entry for the NODE_EXTRA_CA_CERTS test: that variable is read only at start-up.
// Usage: node --conditions=@gen/source --import tsx send-once.ts <url>; prints the outcome as JSON.
import { createWebhookSender } from "../../src/index.ts";
import { HOST } from "./senders.ts";
import { resolverFor } from "./fake-resolver.ts";

const url = process.argv[2] ?? "";
const sender = createWebhookSender({ timeoutMs: 5_000, allowedCidrs: ["127.0.0.1/32"], lookup: resolverFor(HOST, ["127.0.0.1"]) });
const outcome = await sender.send(url, "{}");
sender.close();
process.stdout.write(JSON.stringify(outcome));
