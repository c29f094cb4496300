import { lookup as dnsLookup } from "node:dns";
import https from "node:https";
import { isIP } from "node:net";
import tls, { type SecureContextOptions } from "node:tls";
import { WireError } from "@gen/domain";
import got, { type BeforeRequestHook, type Request as GotRequest, type RequestFunction } from "got";
import { createAddressPolicy, createGuardedLookup, type AddressLookup } from "@gen/webhook-url";
import type { AttemptOutcome } from "./attempt-outcome.ts";
import { classifyFailure } from "./classify-failure.ts";
import { discardBody } from "./discard-body.ts";
import { parseSendTarget } from "./send-target.ts";
import { statusOutcome } from "./status-outcome.ts";

export const WEBHOOK_USER_AGENT = "service-Webhook/1";
const CONTENT_TYPE = "application/json";

/**
 * got spreads `cacheOptions` (four keys, all unset when nothing is cached) into the object literal
 * of ~30 fields it builds for Node on every request (`createNativeRequestOptions`), and V8 builds
 * that literal about ten times slower after a non-empty spread: 55-70 µs per request, the largest
 * single cost of an attempt in the worker's profile. Nothing is cached
 * (no `cache` option), so the request's own copy is emptied just before got builds that object.
 */
const emptyCacheOptions: BeforeRequestHook = (options) => {
  options.cacheOptions = {};
};

// Below the 5 s idle limit of Node servers (and most proxies), so we rarely pick a pooled
// socket the receiver is closing at that moment; a server's `Keep-Alive: timeout=` hint can
// only shorten it.
const IDLE_SOCKET_MS = 4_000;
// How much of a response body may run out so the socket can be reused (see discard-body.ts).
const DISCARD_LIMITS = { maxBytes: 64 * 1024, maxMs: 1_000 };

export interface WebhookSenderOptions {
  /** Whole attempt, resolution included: response headers must arrive within it. */
  timeoutMs: number;
  /** `WEBHOOK_ALLOWED_CIDRS`; throws on a malformed entry. */
  allowedCidrs: readonly string[];
  /** Resolver with `dns.lookup`'s `{ all: true }` signature; defaults to `dns.lookup`. */
  lookup?: AddressLookup;
  /**
   * TEST ONLY. Trusted CAs *instead of* the system store and NODE_EXTRA_CA_CERTS (Node replaces,
   * not extends, the store when `ca` is given). Production leaves it unset.
   */
  ca?: SecureContextOptions["ca"];
}

export interface WebhookSender {
  /** One delivery attempt. Never rejects: every failure is an outcome. */
  send(url: string, body: string): Promise<AttemptOutcome>;
  /** Closes pooled and in-flight connections; later sends fail with `request_failed`. */
  close(): void;
  /** Requests still open (waiting for a response, or their body still running out): what `close()` would cut. */
  openRequests(): number;
}

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const { timeoutMs } = options;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new RangeError(`timeoutMs must be a positive integer, got ${timeoutMs}`);
  const policy = createAddressPolicy(options.allowedCidrs);

  // One pool per sender; the guarded lookup runs for every new socket it opens. Agent options
  // override per-request ones in Node, so nothing passed later can swap the lookup or the CAs.
  //
  // Every connection shares one TLS context (the trust store: the default one, which includes
  // NODE_EXTRA_CA_CERTS, or `ca`): given none, tls.connect builds a context per connection (a new
  // SSL_CTX with the store attached), which was most of what opening a connection cost this process
  // when bursts opened many. Certificate and host name checks are per
  // connection either way (rejectUnauthorized, servername).
  const agent = new https.Agent({
    keepAlive: true,
    timeout: IDLE_SOCKET_MS,
    lookup: createGuardedLookup(options.lookup ?? dnsLookup, policy),
    secureContext: tls.createSecureContext(options.ca === undefined ? {} : { ca: options.ca }),
  });

  const client = got.extend({
    method: "POST",
    agent: { https: agent },
    http2: false,
    followRedirect: false,
    retry: { limit: 0 },
    throwHttpErrors: false,
    // got would otherwise advertise gzip/br for a body we never read.
    decompress: false,
    timeout: { request: timeoutMs },
    https: { rejectUnauthorized: true },
    headers: { "content-type": CONTENT_TYPE, "user-agent": WEBHOOK_USER_AGENT },
    hooks: { beforeRequest: [emptyCacheOptions] },
  });

  const inFlight = new Set<GotRequest>();
  let closed = false;

  function attempt(url: string, body: string): Promise<AttemptOutcome> {
    if (closed) return Promise.resolve(failed(WireError.RequestFailed, "sender is closed"));
    const target = parseSendTarget(url);
    if (!target) return Promise.resolve(failed(WireError.RequestFailed, "not a sendable https URL"));

    // Node skips `lookup` for an IP host, so an IP literal is checked here (submission already
    // refuses them; this is defence in depth).
    const host = target.url.hostname.replace(/^\[(.*)\]$/, "$1");
    if (isIP(host) !== 0) {
      const reason = policy.check(host);
      if (reason !== null) return Promise.resolve(failed(WireError.BlockedPrivateAddress, `${host} (${reason})`));
    }

    const wireHeaders = {
      "Content-Type": CONTENT_TYPE,
      "User-Agent": WEBHOOK_USER_AGENT,
      "Content-Length": String(Buffer.byteLength(body)),
    };
    // The last hop before Node: the request line gets the raw path and query, and the headers are
    // exactly ours (Node adds only Host and Connection).
    const request: RequestFunction = (requestUrl, requestOptions, callback) =>
      https.request(requestUrl, nodeOptions(requestOptions, target.requestTarget, wireHeaders), callback);

    return new Promise((resolve) => {
      let stream: GotRequest;
      try {
        stream = client.stream(target.url, { body, request });
      } catch (error) {
        resolve(failed(classifyFailure(error), describe(error)));
        return;
      }
      inFlight.add(stream);
      // got's stream is never destroyed after a body that ran out (it does not auto-destroy), so it
      // emits "end" but no "close": leaving it in the set on "close" only kept every attempt's
      // request (~15 kB) for the life of the process, and made each GC copy them.
      const forget = () => inFlight.delete(stream);
      stream.once("end", forget);
      let settled = false;
      const settle = (outcome: AttemptOutcome): void => {
        if (settled) return;
        settled = true;
        resolve(outcome);
      };
      // Errors after the status is known (a body cut off, a late timer) change nothing.
      stream.on("error", (error: unknown) => settle(failed(classifyFailure(error), describe(error))));
      stream.once("close", () => {
        forget();
        settle(failed(WireError.RequestFailed, "request closed before a response"));
      });
      stream.once("response", (response: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
        settle(statusOutcome(response.statusCode));
        discardBody(stream, declaredLength(response.headers["content-length"]), DISCARD_LIMITS);
      });
    });
  }

  return {
    send: attempt,
    close() {
      closed = true;
      for (const stream of inFlight) stream.destroy();
      inFlight.clear();
      agent.destroy();
    },
    openRequests: () => inFlight.size,
  };
}

/**
 * got's options for Node carry ~30 fields, most of them unset here; Node copies them twice more
 * (https.request onto the URL's fields, ClientRequest), each copy paying for every field, ~50 µs
 * per request in all. Only the set ones are passed on, with our request line and headers.
 */
function nodeOptions(fromGot: https.RequestOptions, path: string, headers: Record<string, string>): https.RequestOptions {
  const options: Record<string, unknown> = {};
  for (const key in fromGot) {
    const value = fromGot[key as keyof https.RequestOptions];
    if (value !== undefined) options[key] = value;
  }
  options.path = path;
  options.headers = headers;
  return options;
}

function failed(lastError: Exclude<AttemptOutcome, { ok: true }>["lastError"], detail: string): AttemptOutcome {
  return { ok: false, lastError, status: null, detail };
}

function declaredLength(header: string | string[] | undefined): number | undefined {
  if (typeof header !== "string" || !/^\d+$/.test(header)) return undefined;
  return Number(header);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? ` (${error.cause.message})` : "";
  return `${typeof code === "string" ? `${code}: ` : ""}${error.message}${cause}`;
}
