export interface LaneLimits {
  /** Items per batch at most; a longer queue of one key is sent as several batches, one after another. */
  maxSize: number;
  /** Keys being written at once: each holds a connection that may be waiting on a lock. */
  maxLanes: number;
}

/**
 * One lane per key, for statements that may wait on a lock that key's rows (a user's row an
 * operator holds): a key's items are written one batch at a time (every item that queued while the
 * previous batch of the key was written), so a key never holds more than one connection, and at
 * most `maxLanes` keys at once, so waiting keys never take the whole pool. Keys wait for a lane in
 * the order they first queued. `flush` answers its items itself and must not reject.
 */
export function serialLanes<T>(limits: LaneLimits, keyOf: (item: T) => string, flush: (items: T[]) => Promise<void>): (items: T[]) => void {
  // Keys with queued items, in the order they queued (a Map iterates in insertion order).
  const queued = new Map<string, T[]>();
  const running = new Set<string>();
  const next = () => {
    for (const [key, items] of queued) {
      if (running.size >= limits.maxLanes) return;
      if (running.has(key)) continue;
      const batch = items.splice(0, limits.maxSize);
      if (items.length === 0) queued.delete(key);
      running.add(key);
      void flush(batch).finally(() => {
        running.delete(key);
        next();
      });
    }
  };
  return (items) => {
    for (const item of items) {
      const key = keyOf(item);
      const list = queued.get(key);
      if (list) list.push(item);
      else queued.set(key, [item]);
    }
    next();
  };
}
