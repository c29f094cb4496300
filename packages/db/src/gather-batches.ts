// Group commit's gathering, the one batcher of the code base: the gateway's submissions and polls,
// the delivery worker's statements of concurrent attempts, and the rate limiter's gathered takes
// (unbounded in flight: every turn's takes go out at its end).
export interface BatchLimits {
  /** Items per batch at most; a fuller queue is sent as several batches. */
  maxSize: number;
  /** Batches being written at once before new items wait for one to finish... */
  maxInFlight: number;
  /** ...but never longer than this after the first of them arrived: a slow batch (a locked row) holds the others up by this much at most. */
  maxWaitMs: number;
}

/**
 * Group commit's gathering. Items pushed during one turn of the event loop are sent together at
 * the end of that turn (setImmediate: after the turn's I/O callbacks) when fewer than
 * `maxInFlight` batches are being written; otherwise they gather until one of those finishes or
 * `maxWaitMs` passed, whichever comes first. So an idle gateway waits for nobody, and under load
 * the batches grow with the time a batch takes instead of being as small as the turns are.
 */
export function gatherBatches<T>(limits: BatchLimits, flush: (items: T[]) => Promise<void>): (item: T) => void {
  let pending: T[] = [];
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  const send = () => {
    clearTimeout(timer);
    timer = undefined;
    while (pending.length > 0) {
      const items = pending.slice(0, limits.maxSize);
      pending = pending.slice(limits.maxSize);
      inFlight++;
      void flush(items).finally(() => {
        inFlight--;
        if (pending.length > 0 && inFlight < limits.maxInFlight) send();
      });
    }
  };
  const sendIfFree = () => {
    if (inFlight < limits.maxInFlight) send();
  };
  return (item) => {
    pending.push(item);
    if (pending.length >= limits.maxSize) sendIfFree();
    else if (pending.length === 1) {
      setImmediate(sendIfFree);
      timer = setTimeout(send, limits.maxWaitMs);
    }
  };
}
