import { validateWebhookUrl, WEBHOOK_URL_MAX_LENGTH } from "@gen/webhook-url";

// Hosts here are only ever parsed, never contacted.
const longUrl = (length: number) => {
  const base = "https://example.com/";
  return base + "a".repeat(length - base.length);
};

const IP_HOST = "webhook_url host must be a domain name, not an IP address";
const CREDENTIALS = "webhook_url must not contain credentials";
const PORT = "webhook_url port must be 443 when given";
const NOT_PUBLIC = "webhook_url host must be a public domain name";
const INVALID_URL = "webhook_url is not a valid URL";
const CONTROL = "webhook_url must not contain whitespace or control characters";
const BAD_DOMAIN = "webhook_url host is not a valid domain name";
const NOT_ASCII = "webhook_url must be ASCII after the host name (percent-encode other characters)";

const refused: [label: string, value: unknown, reason: string][] = [
  // Type, emptiness, length, parseability.
  ["number", 42, "webhook_url must be a string"],
  ["null", null, "webhook_url must be a string"],
  ["object", { href: "https://example.com/" }, "webhook_url must be a string"],
  ["array", ["https://example.com/"], "webhook_url must be a string"],
  ["empty", "", "webhook_url must not be empty"],
  ["2049 characters", longUrl(2049), "webhook_url must be at most 2048 characters"],
  ["not a URL", "example.com/hook", INVALID_URL],
  ["scheme only", "https://", INVALID_URL],
  ["numeric top-level label", "https://example.123/", INVALID_URL],
  ["port out of range", "https://example.com:65536/", INVALID_URL],
  ["invalid punycode", "https://xn--a.com/", INVALID_URL],
  ["NUL percent-encoded in host", "https://exa%00mple.com/", INVALID_URL],
  // Whitespace, controls, invisible characters, backslashes.
  ["leading space", " https://example.com/", CONTROL],
  ["trailing newline", "https://example.com/\n", CONTROL],
  ["tab inside host", "https://exa\tmple.com/", CONTROL],
  ["space in path", "https://example.com/a b", CONTROL],
  ["DEL", "https://example.com/\x7f", CONTROL],
  ["soft hyphen in host", "https://exam\u00adple.com/", CONTROL],
  ["zero-width space", "https://example.com\u200b/", CONTROL],
  ["right-to-left override", "https://example.com/\u202e", CONTROL],
  ["no-break space", "https://example.com/\u00a0", CONTROL],
  ["lone surrogate", "https://example.com/\ud800", CONTROL],
  ["backslash as slash", "https:\\\\example.com/", "webhook_url must not contain backslashes"],
  ["backslash before @", "https://example.com\\@evil.example/", "webhook_url must not contain backslashes"],
  // Scheme.
  ["http", "http://example.com/hook", "webhook_url must use https"],
  ["ftp", "ftp://example.com/", "webhook_url must use https"],
  ["javascript", "javascript:alert(1)", "webhook_url must use https"],
  ["ws", "wss://example.com/", "webhook_url must use https"],
  ["no slashes", "https:example.com/hook", "webhook_url must start with https:// followed by the host name"],
  ["one slash", "https:/example.com/hook", "webhook_url must start with https:// followed by the host name"],
  ["three slashes", "https:///example.com/hook", "webhook_url must start with https:// followed by the host name"],
  // Credentials, including empty ones the parser would drop.
  ["user and password", "https://user:pass@example.com/", CREDENTIALS],
  ["user only", "https://user@example.com/", CREDENTIALS],
  ["empty userinfo", "https://@example.com/", CREDENTIALS],
  ["empty user and password", "https://:@example.com/", CREDENTIALS],
  ["password only", "https://:secret@example.com/", CREDENTIALS],
  ["userinfo before port", "https://u@example.com:443/", CREDENTIALS],
  // Ports: only a literal 443.
  ["port 8443", "https://example.com:8443/", PORT],
  ["port 80", "https://example.com:80/", PORT],
  ["port 0443", "https://example.com:0443/", PORT],
  ["empty port", "https://example.com:/", PORT],
  ["empty port without path", "https://example.com:", PORT],
  ["port 1", "https://example.com:1/hook", PORT],
  // IPv4 in every notation WHATWG accepts.
  ["dotted loopback", "https://127.0.0.1/", IP_HOST],
  ["dotted public", "https://93.184.216.34/hook", IP_HOST],
  ["dotted with port 443", "https://127.0.0.1:443/", IP_HOST],
  ["decimal", "https://2130706433/", IP_HOST],
  ["hex", "https://0x7f000001/", IP_HOST],
  ["octal", "https://0177.0.0.1/", IP_HOST],
  ["short", "https://127.1/", IP_HOST],
  ["mixed hex short", "https://0x7f.1/", IP_HOST],
  ["zero", "https://0/", IP_HOST],
  ["unspecified", "https://0.0.0.0/", IP_HOST],
  ["percent-encoded", "https://%31%32%37.0.0.1/", IP_HOST],
  ["full-width digits", "https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", IP_HOST],
  ["ideographic full stops", "https://127\u30020\u30020\u30021/", IP_HOST],
  ["trailing dot", "https://127.0.0.1./", IP_HOST],
  ["percent-encoded trailing dot", "https://127.0.0.1%2e/", IP_HOST],
  ["metadata address", "https://169.254.169.254/latest/meta-data/", IP_HOST],
  // IPv6 of any kind.
  ["IPv6 loopback", "https://[::1]/", IP_HOST],
  ["IPv6 loopback with port", "https://[::1]:443/", IP_HOST],
  ["IPv4-mapped IPv6", "https://[::ffff:127.0.0.1]/", IP_HOST],
  ["IPv4-mapped IPv6 in hex", "https://[::ffff:7f00:1]/", IP_HOST],
  ["public IPv6", "https://[2606:4700::1111]/", IP_HOST],
  ["IPv6 with zone", "https://[fe80::1%25eth0]/", IP_HOST],
  ["unclosed bracket", "https://[::1/", IP_HOST],
  // Not a public domain name.
  ["localhost", "https://localhost/", NOT_PUBLIC],
  ["localhost with port", "https://localhost:443/hook", NOT_PUBLIC],
  ["upper-case localhost", "https://LOCALHOST/", NOT_PUBLIC],
  ["full-width localhost", "https://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/", NOT_PUBLIC],
  ["percent-encoded localhost", "https://%6c%6f%63%61%6c%68%6f%73%74/", NOT_PUBLIC],
  ["subdomain of localhost", "https://api.localhost/", NOT_PUBLIC],
  ["mDNS name", "https://printer.local/", NOT_PUBLIC],
  ["internal name", "https://metadata.google.internal/computeMetadata/v1/", NOT_PUBLIC],
  ["home.arpa name", "https://router.home.arpa/", NOT_PUBLIC],
  ["single label", "https://intranet/hook", NOT_PUBLIC],
  ["trailing dot name", "https://example.com./", "webhook_url host must not end with a dot"],
  ["localhost trailing dot", "https://localhost./", "webhook_url host must not end with a dot"],
  ["empty label", "https://a..example.com/", BAD_DOMAIN],
  ["dollar in host", "https://exa$mple.com/", BAD_DOMAIN],
  ["leading hyphen label", "https://-a.example.com/", BAD_DOMAIN],
  ["label of 64 characters", `https://${"a".repeat(64)}.example.com/`, BAD_DOMAIN],
  ["host over 253 characters", `https://${`${"a".repeat(60)}.`.repeat(4)}example.com/`, BAD_DOMAIN],
  // Non-ASCII after the host.
  ["non-ASCII path", "https://example.com/caf\u00e9", NOT_ASCII],
  ["non-ASCII query", "https://example.com/?q=\u00fc", NOT_ASCII],
  ["non-ASCII fragment", "https://example.com/#\u00e9", NOT_ASCII],
];

const accepted: [label: string, value: string][] = [
  ["plain", "https://example.com/hook"],
  ["no path", "https://example.com"],
  ["explicit 443 and query", "https://hooks.example.com:443/a?b=c&d=%20e"],
  ["punycode", "https://xn--bcher-kva.example/"],
  ["unicode host", "https://b\u00fccher.example/webhook"],
  ["dot segments kept", "https://example.com/path/with/../dots?x=1"],
  ["fragment kept", "https://example.com/path/with/../dots?x=1#frag"],
  ["empty fragment kept", "https://example.com/hook#"],
  ["encoded dot segments kept", "https://example.com/a/%2e%2e/b"],
  ["query without path", "https://example.com?token=abc"],
  ["upper-case scheme and host", "HTTPS://Example.COM/Hook"],
  ["secret in path and query", "https://api.example.org/hooks/3f9a/receive?secret=s3cr%2Ft&x=&y"],
  ["deep subdomain", "https://a.b.c.d.example.co.uk/x"],
  ["underscore label", "https://my_app.example.com/"],
  ["IP-looking subdomain", "https://127.0.0.1.example.com/"],
  ["numeric labels with named TLD", "https://1.2.3.4.example/"],
  ["hyphenated", "https://my-hooks.example-host.io/in"],
  ["raw invalid percent sequence", "https://example.com/%zz?%"],
  ["reserved characters in query", "https://example.com/h?a=[1]&b={2}|3"],
  ["exactly 2048 characters", longUrl(WEBHOOK_URL_MAX_LENGTH)],
];

describe("validateWebhookUrl refuses", () => {
  it("has a wide table", () => {
    expect(refused.length).toBeGreaterThanOrEqual(45);
  });

  it.each(refused)("%s", (_label, value, reason) => {
    expect(validateWebhookUrl(value)).toEqual({ ok: false, reason });
  });
});

describe("validateWebhookUrl accepts", () => {
  it.each(accepted)("%s, returning the input byte for byte", (_label, value) => {
    const result = validateWebhookUrl(value);
    expect(result).toEqual({ ok: true, url: value });
    if (result.ok) expect(Buffer.from(result.url).equals(Buffer.from(value))).toBe(true);
  });

  it("counts characters, not UTF-16 units", () => {
    const host = "https://\u{1f600}.example/";
    // The emoji host is IDNA-valid; its two UTF-16 units count as one character.
    const value = host + "a".repeat(WEBHOOK_URL_MAX_LENGTH - [...host].length);
    expect(value.length).toBe(WEBHOOK_URL_MAX_LENGTH + 1);
    expect(validateWebhookUrl(value)).toEqual({ ok: true, url: value });
  });
});

describe("validateWebhookUrl", () => {
  it("never throws, whatever it is given", () => {
    const odd: unknown[] = [
      undefined,
      Symbol("x"),
      1n,
      () => "https://example.com/",
      new URL("https://example.com/"),
      "\u0000",
      "%",
      "[",
      "https://[",
      "https://a:b:c@d/",
      "x".repeat(100_000),
    ];
    for (const value of odd) expect(() => validateWebhookUrl(value)).not.toThrow();
    for (const value of odd) expect(validateWebhookUrl(value).ok).toBe(false);
  });
});
