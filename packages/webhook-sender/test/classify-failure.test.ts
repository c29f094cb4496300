import { BlockedAddressError, ResolutionError } from "@gen/webhook-url";
import { classifyFailure } from "../src/classify-failure.ts";

/** Shaped like got's RequestError: the original error's code copied up, the original as `cause`. */
function gotError(cause: Record<string, unknown>, name = "RequestError"): Error {
  const error = new Error("wrapped", { cause: Object.assign(new Error("original"), cause) });
  return Object.assign(error, { name, code: typeof cause.code === "string" ? cause.code : "ERR_GOT_REQUEST_ERROR" });
}

describe("classifyFailure", () => {
  it("reports a blocked address found during resolution", () => {
    expect(classifyFailure(gotError({ code: "ERR_WEBHOOK_BLOCKED_ADDRESS" }))).toBe("blocked_private_address");
    expect(classifyFailure(new BlockedAddressError("h.example", "10.0.0.1", "private"))).toBe("blocked_private_address");
  });

  it.each(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "ENODATA", "ESERVFAIL"])("reports %s as dns_failed", (code) => {
    expect(classifyFailure(gotError({ code, syscall: "getaddrinfo" }))).toBe("dns_failed");
  });

  it("reports any getaddrinfo failure and any wrapped resolver failure as dns_failed", () => {
    expect(classifyFailure(gotError({ code: "ESOMETHINGNEW", syscall: "getaddrinfo" }))).toBe("dns_failed");
    expect(classifyFailure(gotError({ code: "ERR_WEBHOOK_RESOLUTION_FAILED" }))).toBe("dns_failed");
    // An injected resolver that fails with a bare Error still counts as resolution.
    expect(classifyFailure(new ResolutionError("h.example", new Error("boom")))).toBe("dns_failed");
    expect(classifyFailure(new ResolutionError("h.example"))).toBe("dns_failed");
  });

  it("reports got's timer as timeout", () => {
    const timeout = Object.assign(new Error("Timeout awaiting 'request' for 300ms"), {
      name: "TimeoutError",
      code: "ETIMEDOUT",
      cause: Object.assign(new Error("Timeout awaiting 'request' for 300ms"), { name: "TimeoutError", code: "ETIMEDOUT", event: "request" }),
    });
    expect(classifyFailure(timeout)).toBe("timeout");
  });

  it("tells an OS connect timeout from got's timer", () => {
    expect(classifyFailure(gotError({ code: "ETIMEDOUT", syscall: "connect" }))).toBe("connect_failed");
    expect(classifyFailure(gotError({ code: "ETIMEDOUT" }))).toBe("timeout");
  });

  it.each([
    "CERT_HAS_EXPIRED",
    "CERT_NOT_YET_VALID",
    "DEPTH_ZERO_SELF_SIGNED_CERT",
    "SELF_SIGNED_CERT_IN_CHAIN",
    "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
    "ERR_TLS_CERT_ALTNAME_INVALID",
    "ERR_TLS_HANDSHAKE_TIMEOUT",
    "ERR_SSL_WRONG_VERSION_NUMBER",
    "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION",
    "EPROTO",
    "HOSTNAME_MISMATCH",
    "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  ])("reports %s as tls_error", (code) => {
    expect(classifyFailure(gotError({ code }))).toBe("tls_error");
  });

  it.each(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET", "EPIPE", "ECONNABORTED", "EADDRNOTAVAIL"])("reports %s as connect_failed", (code) => {
    expect(classifyFailure(gotError({ code, syscall: "connect" }))).toBe("connect_failed");
  });

  it("looks inside Node's happy-eyeballs AggregateError", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.2:443"), { code: "ECONNREFUSED", syscall: "connect" });
    const aggregate = new AggregateError([refused, refused], "All attempts failed");
    expect(classifyFailure(new Error("wrapped", { cause: aggregate }))).toBe("connect_failed");
  });

  it.each([
    ["a malformed response", { code: "HPE_INVALID_CONSTANT" }],
    ["a path Node refuses", { code: "ERR_UNESCAPED_CHARACTERS" }],
    ["got's generic error", {}],
  ])("reports %s as request_failed", (_label, cause) => {
    expect(classifyFailure(gotError(cause))).toBe("request_failed");
  });

  it("copes with non-errors and cyclic causes", () => {
    expect(classifyFailure("boom")).toBe("request_failed");
    expect(classifyFailure(undefined)).toBe("request_failed");
    const cyclic: { code: string; cause?: unknown } = { code: "EWHATEVER" };
    cyclic.cause = cyclic;
    expect(classifyFailure(cyclic)).toBe("request_failed");
  });

  it("puts a blocked address ahead of everything else in the chain", () => {
    const error = new Error("wrapped", { cause: new BlockedAddressError("h.example", "127.0.0.1", "loopback") });
    Object.assign(error, { code: "ECONNRESET" });
    expect(classifyFailure(error)).toBe("blocked_private_address");
  });
});
