/**
 * Records the calls of an object's method (still calling it) until `restore`. ESM jest has no
 * global `jest.spyOn`, and @jest/globals is not a dependency here.
 */
export function countCalls<T extends object, K extends keyof T>(target: T, method: K): { calls: unknown[][]; restore: () => void } {
  const calls: unknown[][] = [];
  const original = target[method] as (...args: unknown[]) => unknown;
  const own = Object.prototype.hasOwnProperty.call(target, method);
  (target as Record<K, unknown>)[method] = (...args: unknown[]) => {
    calls.push(args);
    return original.apply(target, args);
  };
  return {
    calls,
    restore: () => {
      if (own) (target as Record<K, unknown>)[method] = original;
      else delete (target as Record<K, unknown>)[method];
    },
  };
}
