import { isIP } from "node:net";
import got from "got";
import { BLOCKED_ADDRESS_CODE } from "@gen/webhook-url";
import { DownloadError, type DownloadFailure } from "./download-error.ts";
import type { DownloadGuard } from "./download-guard.ts";

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
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

type HopResult = { kind: "file"; file: DownloadedFile } | { kind: "redirect"; location: URL };

/**
 * Fetches an upstream output URL into memory with bounded size and time. Redirects are followed
 * here, one hop at a time, so that every hop's address goes through `guard` (got's own
 * following would reuse the first hop's checks only for names, never for IP literals). No
 * retries: the worker decides what a failure means. Throws DownloadError.
 */
export async function downloadFile(url: string, limits: DownloadLimits, guard: DownloadGuard): Promise<DownloadedFile> {
  let target = httpUrl(url);
  const deadline = Date.now() + limits.timeoutMs;
  for (let redirects = 0; ; redirects++) {
    const hop = await fetchHop(target, limits, deadline, guard);
    if (hop.kind === "file") return hop.file;
    if (redirects === MAX_REDIRECTS)
      throw new DownloadError("too_many_redirects", `download of ${labelOf(target)} failed: more than ${MAX_REDIRECTS} redirects`);
    target = hop.location;
  }
}

function fetchHop(target: URL, limits: DownloadLimits, deadline: number, guard: DownloadGuard): Promise<HopResult> {
  const label = labelOf(target);
  // Node's agents skip `lookup` for an IP literal, so the policy is applied to it here.
  const literal = target.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(literal) !== 0) {
    const reason = guard.policy.check(literal);
    if (reason !== null) return Promise.reject(new DownloadError("blocked_address", `download of ${label} refused: ${literal} (${reason})`));
  }
  const remaining = deadline - Date.now();
  if (remaining <= 0) return Promise.reject(new DownloadError("timeout", `download of ${label} failed: not finished within ${limits.timeoutMs} ms`));

  return new Promise<HopResult>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let contentType: string | undefined;
    let settled = false;

    const stream = got.stream(target, {
      agent: guard.agents,
      http2: false,
      retry: { limit: 0 },
      followRedirect: false,
      throwHttpErrors: false,
      timeout: { request: remaining },
    });

    const finish = (): void => {
      settled = true;
      clearTimeout(timer);
    };
    const fail = (reason: DownloadFailure, detail: string, cause?: unknown): void => {
      if (settled) return;
      finish();
      stream.destroy();
      reject(new DownloadError(reason, `download of ${label} failed: ${detail}`, cause === undefined ? undefined : { cause }));
    };
    const timer = setTimeout(() => fail("timeout", `not finished within ${limits.timeoutMs} ms`), remaining);

    stream.on("response", (response: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
      const location = REDIRECT_STATUSES.has(response.statusCode) ? httpLocation(response.headers.location, target) : undefined;
      if (location) {
        finish();
        stream.destroy();
        resolve({ kind: "redirect", location });
        return;
      }
      // A redirect elsewhere than http/https is not followed; it ends up as its 3xx status.
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
      finish();
      resolve({ kind: "file", file: { data: Buffer.concat(chunks, received), contentType } });
    });
    stream.on("error", (error: Error) => {
      if (isBlocked(error)) fail("blocked_address", error.message, error);
      else if (error.name === "TimeoutError") fail("timeout", error.message, error);
      else fail("network", error.message, error);
    });
  });
}

function labelOf(target: URL): string {
  return `${target.origin}${target.pathname}`; // never the query: it may hold a signature
}

function httpUrl(url: string): URL {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new DownloadError("invalid_url", `download refused: not an http(s) URL: ${String(url).slice(0, 200)}`);
  }
  return parsed;
}

function httpLocation(location: string | string[] | undefined, base: URL): URL | undefined {
  if (typeof location !== "string" || !URL.canParse(location, base.href)) return undefined;
  const next = new URL(location, base);
  return next.protocol === "http:" || next.protocol === "https:" ? next : undefined;
}

/** got wraps the lookup's error; the code survives on the wrapper or down the cause chain. */
function isBlocked(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    if ((current as { code?: unknown }).code === BLOCKED_ADDRESS_CODE) return true;
  }
  return false;
}
