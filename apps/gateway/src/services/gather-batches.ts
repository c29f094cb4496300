/**
 * Collects what callers push during one turn of the event loop and hands it to `flush` at the end
 * of that turn (setImmediate: after the I/O callbacks of the turn ran), or at once when `maxSize`
 * items are waiting. An idle gateway waits for nobody: a lone item is flushed in the same turn it
 * arrived; under load, requests whose reads finished in the same turn share one flush.
 */
export function gatherBatches<T>(maxSize: number, flush: (items: T[]) => void): (item: T) => void {
  let pending: T[] = [];
  const flushPending = () => {
    const items = pending;
    pending = [];
    if (items.length > 0) flush(items);
  };
  return (item) => {
    pending.push(item);
    if (pending.length >= maxSize) flushPending();
    else if (pending.length === 1) setImmediate(flushPending);
  };
}
