import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { readCappedBody } from "@gen/capped-body";
import { createPlainExchange, plainRequest } from "./plain-exchange.ts";

export interface CappedFetchOptions {
  /** Largest body read; a longer one rejects with AnswerTooLargeError. */
  maxBytes: number;
  /** Time limit of the whole exchange, head and body. */
  timeoutMs: number;
}

/**
 * A `fetch` for the providers' SDKs, which all take one: each answer is read into memory up to
 * `maxBytes` (readCappedBody) and the exchange is aborted after `timeoutMs`, so a huge, endless or
 * stalled answer costs at most the cap and the time limit whatever the SDK would have done with
 * it. The caller's own signal still aborts it.
 */
export function createCappedFetch(options: CappedFetchOptions, base: typeof fetch = globalThis.fetch): typeof fetch {
  const exchange = createPlainExchange();
  return async (input, init) => {
    // The SDKs' ordinary requests (JSON or no body) take the cheap path; a redirect, an upload or
    // a Request object goes through `base`, with the same limits.
    const plain = plainRequest(input, init);
    const answer = plain && (await exchange(plain, { ...options, signal: init?.signal }));
    if (answer) return answer;
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const response = await base(input, { ...init, signal });
    // The same capped read as every other answer: a Content-Length above the cap is refused before
    // any byte is read, and the body is cancelled as soon as what arrived passes it.
    const body = response.body
      ? await readCappedBody(Readable.fromWeb(response.body as WebReadableStream), options.maxBytes, response.headers.get("content-length") ?? undefined)
      : Buffer.alloc(0);
    // 204 and 304 answers may not carry a body, not even an empty one.
    const nullBody = response.status === 204 || response.status === 304;
    return new Response(nullBody ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
