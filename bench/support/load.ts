import autocannon from "autocannon";

export interface LoadResult {
  requestsPerSec: number;
  /** Responses received in all. */
  requests: number;
  non2xx: number;
  errors: number;
  p99Ms: number;
}

/**
 * autocannon in this process (its HTTP/1.1 client is far lighter than Node's, so the client is not
 * what limits the baseline), keep-alive connections, one fixed request.
 */
export async function load(opts: {
  url: string;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
}): Promise<LoadResult> {
  const result = await autocannon({
    url: opts.url,
    method: opts.method,
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections,
    duration: opts.seconds,
  });
  return {
    requestsPerSec: result.requests.average,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    p99Ms: result.latency.p99,
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}
