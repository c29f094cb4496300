import type { ServerResponse } from "node:http";
import { startReceiver, type Receiver } from "../../../../../packages/webhook-sender/test/helpers/receiver.ts";
import type { KeyPair } from "../../../../../packages/webhook-sender/test/helpers/test-pki.ts";

/** What the receiver does with its n-th request (0-based): answer with a status, or never answer. */
export type Respond = (index: number) => number | "hang";

export interface WebhookReceiver extends Receiver {
  /** Date.now() when each request's body had fully arrived. */
  arrivals: number[];
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
}

/** An HTTPS receiver on 127.0.0.1 that records when each POST arrived. */
export async function startWebhookReceiver(tls: KeyPair, respond: Respond = () => 200): Promise<WebhookReceiver> {
  const arrivals: number[] = [];
  const hanging: ServerResponse[] = [];
  const receiver = await startReceiver({
    tls,
    handler: (_request, response) => {
      const answer = respond(arrivals.length);
      arrivals.push(Date.now());
      if (answer === "hang") {
        hanging.push(response);
        return;
      }
      response.writeHead(answer, { "content-type": "text/plain" });
      response.end("ok");
    },
  });
  return Object.assign(receiver, {
    arrivals,
    async waitForRequests(count: number, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (arrivals.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver saw ${arrivals.length} of ${count} requests`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  });
}
