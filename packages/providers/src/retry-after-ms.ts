const MAX_WAIT_MS = 10 * 60_000;

/**
 * The wait a `Retry-After` header asks for (seconds or an HTTP date), in milliseconds, at most ten
 * minutes so a hostile or broken answer cannot park a task for days; undefined when absent or
 * unreadable. `retry-after-ms`, which some providers send, wins when present.
 */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const precise = headers?.get("retry-after-ms");
  if (precise && /^\d{1,9}(\.\d+)?$/.test(precise.trim())) return Math.min(Math.ceil(Number(precise)), MAX_WAIT_MS);
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d{1,9}$/.test(value)) return Math.min(Number(value) * 1000, MAX_WAIT_MS);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, date - now), MAX_WAIT_MS);
}
