import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { AnswerTooLargeError, readCappedBody } from "@gen/capped-body";

/** A request the SDKs make nearly always: a URL, a method, headers and a text or byte body. */
export interface PlainRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface ExchangeLimits {
  maxBytes: number;
  timeoutMs: number;
  signal?: AbortSignal | null;
}

const NULL_BODY_STATUSES = new Set([204, 304]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A network failure as the platform's fetch reports it. */
const fetchFailed = (cause: unknown) => Object.assign(new TypeError("fetch failed"), { cause });

/**
 * The request an SDK handed its `fetch`, when it is plain: a string or URL target over http(s),
 * a body that is absent, text or bytes, redirects followed (the default). Anything else (a
 * Request object, a FormData or stream body, another redirect mode) is undefined: the caller
 * sends it through the platform's fetch.
 */
export function plainRequest(input: Parameters<typeof fetch>[0], init: RequestInit | undefined): PlainRequest | undefined {
  if (input instanceof Request || (init?.redirect !== undefined && init.redirect !== "follow")) return undefined;
  const url = input instanceof URL ? input : URL.canParse(input) ? new URL(input) : undefined;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) return undefined;
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
  headers.accept ??= "*/*";
  const raw = init?.body;
  let body: Buffer | undefined;
  if (typeof raw === "string" || raw instanceof URLSearchParams) {
    body = Buffer.from(raw.toString());
    headers["content-type"] ??= typeof raw === "string" ? "text/plain;charset=UTF-8" : "application/x-www-form-urlencoded;charset=UTF-8";
  } else if (raw instanceof Uint8Array) body = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  else if (raw instanceof ArrayBuffer) body = Buffer.from(raw);
  else if (raw !== undefined && raw !== null) return undefined;
  if (body) headers["content-length"] = String(body.length);
  return { url, method: (init?.method ?? "GET").toUpperCase(), headers, ...(body ? { body } : {}) };
}

/**
 * One exchange over node:http(s) on keep-alive connections, the answer read into memory up to
 * `maxBytes` and the whole exchange bounded by `timeoutMs`: what the platform's fetch does for
 * the SDKs, for a fraction of its CPU (no WHATWG streams between the socket and the bytes).
 * Answers as fetch does: a Response (a redirect is undefined: the caller follows it with fetch);
 * a network error rejects with TypeError "fetch failed" and the error as its cause, a time-out
 * with a TimeoutError, the caller's abort with its signal's reason.
 */
export function createPlainExchange(): (request: PlainRequest, limits: ExchangeLimits) => Promise<Response | undefined> {
  const agents = { "http:": new http.Agent({ keepAlive: true }), "https:": new https.Agent({ keepAlive: true }) };
  return (request, limits) =>
    new Promise<Response | undefined>((resolve, reject) => {
      const { signal } = limits;
      if (signal?.aborted) return reject(signal.reason);
      const protocol = request.url.protocol as "http:" | "https:";
      const send = protocol === "https:" ? https.request : http.request;
      const req = send(request.url, { method: request.method, headers: request.headers, agent: agents[protocol] });
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        outcome();
      };
      const fail = (error: unknown) =>
        settle(() => {
          req.destroy();
          reject(error);
        });
      const onAbort = () => fail(signal!.reason);
      const timer = setTimeout(() => fail(new DOMException("The operation was aborted due to timeout", "TimeoutError")), limits.timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("error", (error) => fail(fetchFailed(error)));
      req.on("response", (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        if (REDIRECT_STATUSES.has(status) && res.headers.location) {
          res.resume();
          return settle(() => resolve(undefined));
        }
        readCappedBody(res, limits.maxBytes, res.headers["content-length"]).then(
          (read) =>
            settle(() => {
              const headers = new Headers();
              for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
                try {
                  headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
                } catch {
                  // A header fetch would refuse too (a value it cannot carry): left out.
                }
              }
              const body = NULL_BODY_STATUSES.has(status) ? null : read;
              try {
                resolve(new Response(body, { status, statusText: res.statusMessage ?? "", headers }));
              } catch (error) {
                // A status a Response cannot have (above 599): no usable answer, as with fetch.
                reject(fetchFailed(error));
              }
            }),
          (error: unknown) => fail(error instanceof AnswerTooLargeError ? error : fetchFailed(error)),
        );
      });
      req.end(request.body);
    });
}
