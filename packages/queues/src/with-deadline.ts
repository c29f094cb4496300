/**
 * The promise's outcome, or a rejection after `ms`: ioredis and BullMQ wait for a connection far
 * longer than a request may. The work itself goes on; only the caller stops waiting for it.
 *
 * The rejection waits one more turn of the event loop after the timer (setImmediate: after that
 * turn's I/O): when this process itself was stalled past `ms` (a busy CPU), the timer fires before
 * the loop reads an answer that arrived in time, and that answer must win. Without the turn, one
 * 500 ms stall of a loaded gateway failed the rate limiter's call and opened its breaker: 2 s of
 * 70001 for a Redis that had answered.
 */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      immediate = setImmediate(() => reject(new Error(`${what}: no answer within ${ms} ms`)));
    }, ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
    if (immediate) clearImmediate(immediate);
  }
}
