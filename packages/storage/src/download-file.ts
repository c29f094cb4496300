import got from "got";
import { DownloadError, type DownloadFailure } from "./download-error.ts";

export interface DownloadLimits {
  /** Largest body accepted, after decompression; the download stops as soon as it is passed. */
  maxBytes: number;
  /** Deadline for the whole download: connection, every redirect, headers and body. */
  timeoutMs: number;
}

export interface DownloadedFile {
  data: Buffer;
  /** The final response's Content-Type header as sent (parameters included), if any. */
  contentType: string | undefined;
}

const MAX_REDIRECTS = 3;

/**
 * Fetches an upstream output URL into memory with bounded size and time. No retries: the
 * worker decides what a failure means. Throws DownloadError.
 */
export async function downloadFile(url: string, limits: DownloadLimits): Promise<DownloadedFile> {
  const target = httpUrl(url);
  const label = `${target.origin}${target.pathname}`; // never the query: it may hold a signature
  return new Promise<DownloadedFile>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let contentType: string | undefined;
    let settled = false;

    const stream = got.stream(target, {
      retry: { limit: 0 },
      maxRedirects: MAX_REDIRECTS,
      // A redirect elsewhere than http/https is not followed; it ends up as its 3xx status.
      followRedirect: (response) => isHttpLocation(response.headers.location, response.url),
      throwHttpErrors: false,
      // Per request only (got restarts it on each redirect); the timer below bounds the total.
      timeout: { request: limits.timeoutMs },
    });

    const fail = (reason: DownloadFailure, detail: string, cause?: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      stream.destroy();
      reject(new DownloadError(reason, `download of ${label} failed: ${detail}`, cause === undefined ? undefined : { cause }));
    };
    const deadline = setTimeout(() => fail("timeout", `not finished within ${limits.timeoutMs} ms`), limits.timeoutMs);

    stream.on("response", (response: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
      if (response.statusCode < 200 || response.statusCode > 299) {
        fail(`http_${response.statusCode}`, `HTTP ${response.statusCode}`);
        return;
      }
      const declared = Number(response.headers["content-length"]);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        fail("too_large", `Content-Length ${declared} exceeds ${limits.maxBytes} bytes`);
        return;
      }
      const type = response.headers["content-type"];
      contentType = Array.isArray(type) ? type[0] : type;
    });
    stream.on("data", (chunk: Buffer) => {
      if (settled) return;
      received += chunk.length;
      if (received > limits.maxBytes) {
        fail("too_large", `body exceeds ${limits.maxBytes} bytes`);
        return;
      }
      chunks.push(chunk);
    });
    stream.on("end", () => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ data: Buffer.concat(chunks, received), contentType });
    });
    stream.on("error", (error: Error) => {
      if (error.name === "TimeoutError") fail("timeout", error.message, error);
      else if (error.name === "MaxRedirectsError") fail("too_many_redirects", `more than ${MAX_REDIRECTS} redirects`, error);
      else fail("network", error.message, error);
    });
  });
}

function httpUrl(url: string): URL {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new DownloadError("invalid_url", `download refused: not an http(s) URL: ${String(url).slice(0, 200)}`);
  }
  return parsed;
}

function isHttpLocation(location: string | undefined, base: string): boolean {
  if (location === undefined || !URL.canParse(location, base)) return false;
  const { protocol } = new URL(location, base);
  return protocol === "http:" || protocol === "https:";
}
