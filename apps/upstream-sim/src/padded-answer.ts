import { Readable, pipeline } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import type { Response } from "express";

const CHUNK = Buffer.alloc(64 * 1024, "a");
/** A broken upstream's answer size: far beyond any cap, as a real one was (a 700 MB poll answer). */
export const HUGE_ANSWER_BYTES = 700 * 1024 * 1024;
const TRICKLE_MS = 10;

/**
 * Sends `fields` as a JSON object whose last member, `pad`, makes it `bytes` long (Infinity:
 * never ends, 64 KiB every 10 ms). The socket pulls it as it drains, and a reader that hangs up
 * stops it, so the simulator itself never holds more than a few chunks of it.
 */
export function sendPaddedAnswer(res: Response, status: number, fields: Record<string, unknown>, bytes: number): void {
  res.status(status).type("application/json");
  pipeline(Readable.from(padded(fields, bytes)), res, () => {});
}

async function* padded(fields: Record<string, unknown>, bytes: number): AsyncGenerator<string | Buffer> {
  yield `${JSON.stringify(fields).slice(0, -1)},"pad":"`;
  for (let sent = 0; sent < bytes; sent += CHUNK.length) {
    yield CHUNK;
    if (bytes === Infinity) await delay(TRICKLE_MS);
  }
  yield '"}';
}
