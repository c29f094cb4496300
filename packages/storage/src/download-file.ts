import { isIP } from "node:net";
import got from "got";
import { AnswerTooLargeError, readCappedAnswer, type CappedAnswer } from "@gen/capped-body";
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

async function fetchHop(target: URL, limits: DownloadLimits, deadline: number, guard: DownloadGuard): Promise<HopResult> {
  const label = labelOf(target);
  // Node's agents skip `lookup` for an IP literal, so the policy is applied to it here.
  const literal = target.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(literal) !== 0) {
    const reason = guard.policy.check(literal);
    if (reason !== null) throw new DownloadError("blocked_address", `download of ${label} refused: ${literal} (${reason})`);
  }
  const remaining = deadline - Date.now();
  if (remaining <= 0) throw new DownloadError("timeout", `download of ${label} failed: not finished within ${limits.timeoutMs} ms`);

  const stream = got.stream(target, {
    agent: guard.agents,
    http2: false,
    retry: { limit: 0 },
    followRedirect: false,
    throwHttpErrors: false,
    timeout: { request: remaining },
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stream.destroy(new Error("deadline passed"));
  }, remaining);
  let answer: CappedAnswer;
  try {
    // Only a 2xx body is read; a redirect or an error status ends after its head.
    answer = await readCappedAnswer(stream, limits.maxBytes, (head) => head.statusCode >= 200 && head.statusCode <= 299);
  } catch (error) {
    throw failure(label, timedOut ? null : error, limits);
  } finally {
    clearTimeout(timer);
  }
  const { statusCode, headers } = answer;
  const location = REDIRECT_STATUSES.has(statusCode) ? httpLocation(headers.location, target) : undefined;
  if (location) return { kind: "redirect", location };
  // A redirect elsewhere than http/https is not followed; it ends up as its 3xx status.
  if (statusCode < 200 || statusCode > 299) throw new DownloadError(`http_${statusCode}`, `download of ${label} failed: HTTP ${statusCode}`);
  const type = headers["content-type"];
  return { kind: "file", file: { data: answer.body, contentType: Array.isArray(type) ? type[0] : type } };
}

/** `error` null: the whole download's deadline passed. */
function failure(label: string, error: unknown, limits: DownloadLimits): DownloadError {
  const fail = (reason: DownloadFailure, detail: string, cause?: unknown) =>
    new DownloadError(reason, `download of ${label} failed: ${detail}`, cause === undefined ? undefined : { cause });
  if (error === null) return fail("timeout", `not finished within ${limits.timeoutMs} ms`);
  if (error instanceof AnswerTooLargeError) return fail("too_large", error.message);
  const message = error instanceof Error ? error.message : String(error);
  if (isBlocked(error)) return fail("blocked_address", message, error);
  if (error instanceof Error && error.name === "TimeoutError") return fail("timeout", message, error);
  return fail("network", message, error);
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
