import { createWebhookSender, type WebhookSender, type WebhookSenderOptions } from "../../src/index.ts";
import type { Receiver } from "./receiver.ts";

export const HOST = "hooks.test.example";

/** Senders and receivers made in a test, closed after it. */
export function createTracker(): {
  sender(options: WebhookSenderOptions): WebhookSender;
  receiver<T extends Receiver | Receiver[]>(receiver: T): T;
  closeAll(): Promise<void>;
} {
  const senders: WebhookSender[] = [];
  const receivers: Receiver[] = [];
  return {
    sender(options) {
      const sender = createWebhookSender(options);
      senders.push(sender);
      return sender;
    },
    receiver(receiver) {
      receivers.push(...(Array.isArray(receiver) ? receiver : [receiver]));
      return receiver;
    },
    async closeAll() {
      for (const sender of senders.splice(0)) sender.close();
      await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
    },
  };
}

/** The header names in `rawHeaders`, as sent. */
export function headerNames(rawHeaders: string[]): string[] {
  return rawHeaders.filter((_value, index) => index % 2 === 0);
}
