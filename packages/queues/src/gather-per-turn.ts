/**
 * Collects the items pushed during one event-loop turn, grouped by key, and hands each group to
 * `send` at the end of that turn (setImmediate: after the turn's I/O callbacks, so every job or
 * response handled in the turn has pushed by then), in arrival order, at most `maxSize` per group.
 * Nothing waits beyond the turn: a lone item goes out as a group of one.
 */
export function gatherPerTurn<K, T>(maxSize: number, send: (key: K, items: T[]) => void): (key: K, item: T) => void {
  let pending = new Map<K, T[]>();
  const flush = () => {
    const groups = pending;
    pending = new Map();
    for (const [key, items] of groups) {
      if (items.length <= maxSize) send(key, items);
      else for (let i = 0; i < items.length; i += maxSize) send(key, items.slice(i, i + maxSize));
    }
  };
  return (key, item) => {
    if (pending.size === 0) setImmediate(flush);
    const items = pending.get(key);
    if (items) items.push(item);
    else pending.set(key, [item]);
  };
}
