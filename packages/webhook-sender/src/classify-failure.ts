import { WireError, type HttpStatusError, type WireLastError } from "@gen/domain";
import { BLOCKED_ADDRESS_CODE, RESOLUTION_FAILED_CODE } from "@gen/webhook-url";

type FailureClass = Exclude<WireLastError, HttpStatusError>;

const DNS_CODES = new Set([
  RESOLUTION_FAILED_CODE,
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NONAME",
  "EAI_NODATA",
  "EAI_ADDRFAMILY",
  "ENODATA",
  "ESERVFAIL",
  "ENONAME",
  "EBADNAME",
  "EREFUSED",
]);

const TLS_CODES = new Set([
  "EPROTO",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "HOSTNAME_MISMATCH",
  "INVALID_CA",
  "INVALID_PURPOSE",
  "PATH_LENGTH_EXCEEDED",
]);
// CERT_HAS_EXPIRED, UNABLE_TO_VERIFY_LEAF_SIGNATURE, ERR_TLS_CERT_ALTNAME_INVALID, ERR_SSL_WRONG_VERSION_NUMBER, ...
const TLS_CODE_PREFIXES = /^(CERT_|UNABLE_TO_|ERROR_IN_CERT_|ERR_TLS_|ERR_SSL_|ERR_OSSL_)/;

// A reset or broken pipe before the status line counts as a connection failure wherever it
// happens (handshake, upload or waiting for headers): the receiver never answered.
const CONNECT_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENETRESET",
  "EADDRNOTAVAIL",
  "ERR_SOCKET_CONNECTION_TIMEOUT",
]);

/**
 * Maps the error of a failed attempt (got's RequestError, or anything underneath it) to its
 * `last_error`. Pure: it only reads `name`, `code`, `syscall`, `cause` and `errors` (Node's
 * happy-eyeballs AggregateError) along the chain. Anything unrecognised is `request_failed`,
 * e.g. a malformed response (HPE_*) or a URL Node refuses.
 */
export function classifyFailure(error: unknown): FailureClass {
  const chain = flatten(error);
  const codes = chain.map((entry) => entry.code);
  const has = (test: (code: string) => boolean): boolean => codes.some((code) => code !== undefined && test(code));

  if (has((code) => code === BLOCKED_ADDRESS_CODE)) return WireError.BlockedPrivateAddress;
  if (has((code) => DNS_CODES.has(code)) || chain.some((entry) => entry.syscall === "getaddrinfo")) return WireError.DnsFailed;
  if (chain.some((entry) => entry.name === "TimeoutError")) return WireError.Timeout;
  if (has((code) => TLS_CODES.has(code) || TLS_CODE_PREFIXES.test(code))) return WireError.TlsError;
  if (has((code) => CONNECT_CODES.has(code))) return WireError.ConnectFailed;
  // An ETIMEDOUT that is not got's own timer: the OS gave up connecting.
  if (has((code) => code === "ETIMEDOUT")) {
    return chain.some((entry) => entry.code === "ETIMEDOUT" && entry.syscall === "connect") ? WireError.ConnectFailed : WireError.Timeout;
  }
  return WireError.RequestFailed;
}

interface ChainEntry {
  name: string | undefined;
  code: string | undefined;
  syscall: string | undefined;
}

const MAX_ENTRIES = 32;

function flatten(root: unknown): ChainEntry[] {
  const entries: ChainEntry[] = [];
  const seen = new Set<unknown>();
  const pending: unknown[] = [root];
  while (pending.length > 0 && entries.length < MAX_ENTRIES) {
    const current = pending.shift();
    if (typeof current !== "object" || current === null || seen.has(current)) continue;
    seen.add(current);
    const record = current as Record<string, unknown>;
    entries.push({ name: stringOrUndefined(record.name), code: stringOrUndefined(record.code), syscall: stringOrUndefined(record.syscall) });
    if ("cause" in record) pending.push(record.cause);
    if (Array.isArray(record.errors)) pending.push(...(record.errors as unknown[]));
  }
  return entries;
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
