import type { Readable } from "node:stream";

export interface DiscardLimits {
  maxBytes: number;
  maxMs: number;
}

/**
 * The body is never read, but a small one is let run out (and thrown away) so the keep-alive
 * socket goes back to the pool; anything larger or slower than `limits` is cut off by destroying
 * the stream, which closes the socket. The attempt's outcome is settled before this starts.
 */
export function discardBody(stream: Readable, declaredLength: number | undefined, limits: DiscardLimits): void {
  if (declaredLength !== undefined && declaredLength > limits.maxBytes) {
    stream.destroy();
    return;
  }
  let received = 0;
  const cutOff = (): void => {
    clearTimeout(timer);
    stream.destroy();
  };
  const timer = setTimeout(cutOff, limits.maxMs);
  // A draining body must not keep a process that is otherwise done alive.
  timer.unref();
  stream.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (received > limits.maxBytes) cutOff();
  });
  stream.once("close", () => clearTimeout(timer));
  stream.once("end", () => clearTimeout(timer));
}
