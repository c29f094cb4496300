/**
 * A Retry-After header in milliseconds from `now`: delay-seconds or an HTTP date (RFC 9110
 * 10.2.3). Undefined when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
