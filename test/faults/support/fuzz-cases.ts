import { ENDPOINTS, ENDPOINT_INPUT_FIELD, ENDPOINT_PATHS, type Endpoint } from "@gen/catalog";
import { HOSTILE_BODIES } from "./hostile-bodies.ts";

/** One request of the fuzzer: through an HTTP client, or as raw bytes on a socket (`raw`). */
export interface FuzzCase {
  category: string;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
  raw?: Buffer;
  /** For `raw`: half-close after the bytes, or drop the connection (a client that gives up mid-request). */
  close?: "end" | "destroy";
  /** The answer (`status` or `status/code`) the contract dictates, when it dictates one. */
  expect?: string;
}

export { prng } from "../../support/prng.ts";

const MODELS: Record<Endpoint, string> = {
  images: "sim-image-1",
  videos: "sim-video-1",
  audio: "sim-audio-1",
  detect: "sim-detect-1",
  humanize: "sim-humanize-1",
  essay: "sim-essay-1",
  moderations: "sim-moderation-1",
};

const HOSTILE_STRINGS = [
  "",
  " ",
  "\u0000",
  "\u0000\u0001\u001f",
  "\r\n\r\nX-Injected: 1",
  "\ud800",
  "\udfff\ud800",
  "😀".repeat(500),
  "ｆｕｌｌｗｉｄｔｈ",
  "\u202e\u2066",
  "<script>alert(1)</script>",
  "'; DROP TABLE tasks; --",
  "${jndi:ldap://x}",
  "{{7*7}}",
  "%00",
  "%s%n%x",
  "a".repeat(5000),
  "a".repeat(100_001),
  "null",
  "true",
  "0",
  "-0",
  "1e309",
  "NaN",
  "Infinity",
  "__proto__",
  "constructor",
  "[[sim:fail=80003]]",
  "[[sim:delay_ms=99999999]]",
  "[[sim:fail=99999]]",
  "[[sim:stage=../../etc]]",
];

const HOSTILE_NUMBERS = [0, -1, 1.5, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2];

const longUrl = (length: number): string => `https://hooks.example.com/${"a".repeat(length - "https://hooks.example.com/".length)}`;

/** Refused by the contract's own rules (scheme, IP host in any notation, port, credentials, length, not a URL). */
const REFUSED_WEBHOOK_URLS = [
  "http://hooks.example.com/x",
  "https://127.0.0.1/x",
  "https://[::1]/x",
  "https://2130706433/x",
  "https://0x7f.0.0.1/x",
  "https://0x7f000001/x",
  "https://0177.0.0.1/x",
  "https://127.1/x",
  "https://127.0.0.1./x",
  "https://１２７.０.０.１/x",
  "https://[::ffff:127.0.0.1]/x",
  "https://[::ffff:7f00:1]/x",
  "https://[0:0:0:0:0:ffff:7f00:1]/x",
  "https://[64:ff9b::7f00:1]/x",
  "https://169.254.169.254/latest",
  "https://[fe80::1%25eth0]/x",
  "https://0.0.0.0/x",
  "https://[::]/x",
  "https://10.0.0.1/x",
  "https://hooks.example.com:8443/x",
  "https://hooks.example.com:0/x",
  "https://hooks.example.com:65536/x",
  "https://hooks.example.com:0443/x",
  "https://hooks.example.com:/x",
  "https://hooks.example.com:443:443/x",
  "https://user:pass@hooks.example.com/x",
  "https://user@hooks.example.com/x",
  "https://:@hooks.example.com/x",
  "https://hooks.example.com@127.0.0.1/x",
  "https://hooks.example.com%2f@evil/x",
  "https:///x",
  "https://",
  "https:",
  "//hooks.example.com/x",
  "hooks.example.com/x",
  "ftp://hooks.example.com/x",
  "javascript:alert(1)",
  "data:text/plain,hi",
  "file:///etc/passwd",
  "gopher://hooks.example.com/",
  " https://hooks.example.com/x",
  "https://hooks.example.com/x\n",
  "https://hooks.example.com/\u0000",
  "https://hooks.example.com\\@127.0.0.1/x",
  longUrl(2049),
  longUrl(2050),
  `https://${"a".repeat(64)}.example.com/x`,
  "",
];

/** Valid under every contract rule (domain host, https, no port or :443, at most 2048 characters). */
const ACCEPTED_WEBHOOK_URLS = [
  "https://hooks.example.com:443/x",
  "https://xn--nxasmq6b.example/x",
  "https://ουτοπία.δπθ.gr/x",
  "https://hooks.example.com/%2e%2e/%2e%2e/",
  "HTTPS://HOOKS.EXAMPLE.COM/X",
  "https://a.b.c.d.e.f.g.h.example/x",
  longUrl(2048),
  "https://hooks.example.com/x?secret=abc&x=%20y#frag",
  "https://hooks.example.com/p/s3cr%2Ft?a=1&a=2",
];

/** The contract leaves these to the service (names that can only be private, encodings in the host); either answer is documented. */
const UNSETTLED_WEBHOOK_URLS = [
  "https://localhost/x",
  "https://localhost./x",
  "https://foo.localhost/x",
  "https://metadata.google.internal/x",
  "https://hooks%2eexample.com/x",
  "https://example/x",
  "https://hooks.example.com/ü",
  "https://-bad-.example/x",
];

const HOSTILE_WEBHOOK_URLS = [...REFUSED_WEBHOOK_URLS, ...ACCEPTED_WEBHOOK_URLS, ...UNSETTLED_WEBHOOK_URLS];

/** What the gateway must answer a submission that is valid apart from this webhook_url, if the contract settles it. */
function expectedForWebhookUrl(url: string): string | undefined {
  if (REFUSED_WEBHOOK_URLS.includes(url)) return "400/20003";
  if (ACCEPTED_WEBHOOK_URLS.includes(url)) return "202";
  return undefined;
}

const TASK_IDS = [
  "task_",
  "task_0",
  `task_${"0".repeat(32)}`,
  `task_${"g".repeat(32)}`,
  `task_${"A".repeat(32)}`,
  `task_${"0".repeat(33)}`,
  `task_${"0".repeat(10_000)}`,
  "..%2f..%2fetc%2fpasswd",
  "%2e%2e",
  "task_%00",
  "task_%ff%fe",
  "%",
  "%zz",
  "task_0123456789abcdef0123456789abcdef%2fcancel",
  "task_0123456789abcdef0123456789abcdef;x=1",
  "TASK_0123456789ABCDEF0123456789ABCDEF",
  "null",
  "undefined",
  "__proto__",
  "constructor",
  "1e309",
];

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "application/x-json",
  "application/vnd.api+json",
  "text/json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json;;;",
  "APPLICATION/JSON",
  "application/json, text/plain",
  "",
  "*/*",
  "application/json\u0000",
];

const ENCODINGS = ["gzip", "deflate", "br", "identity", "compress", "x-garbage", "gzip, gzip", "GZIP", ""];

const AUTH_HEADERS = [
  "",
  "Bearer",
  "Bearer ",
  "Bearer  x",
  "bearer sk_x",
  "BEARER sk_x",
  "Basic dXNlcjpwYXNz",
  "Token sk_x",
  "Bearer sk_",
  "Bearer sk_" + "a".repeat(10_000),
  "Bearer sk_\u00ff\u00fe",
  "Bearer null",
  "Bearer undefined",
  "Bearer sk_x, Bearer sk_y",
  "Bearer\tsk_x",
  "Digest username=x",
];

const NUMERIC_FIELD: Partial<Record<Endpoint, string>> = { images: "n", videos: "duration_seconds", audio: "duration_seconds", essay: "max_words" };

const NUMBER_LITERALS = [
  "1e309",
  "-1e309",
  "1e-400",
  "-0",
  "0",
  "0.0",
  "1.0",
  "2e0",
  "1E1",
  "1e2",
  "4.0000000000000001",
  "1.5",
  "99999999999999999999999",
  "-99999999999999999999",
  "9007199254740993",
  "2147483648",
  "-2147483649",
  "1e-7",
  "0x10",
  "NaN",
  "Infinity",
  "-Infinity",
  "+1",
  "01",
  ".5",
  "5.",
  "1e",
  "--1",
  "1_000",
  "true",
  '"2"',
  '"1e309"',
  "null",
  "[2]",
  '{"$numberInt":"2"}',
  "1e+2",
  "50",
  "2000",
  "2001",
  "49",
];

// Well-formed JSON (JSON.stringify escapes NUL and lone surrogates) that must still reach storage safely.
const HOSTILE_TEXT = [
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udc00x",
  "\udc00\ud800",
  "\ufeffa lighthouse",
  "\uffff\ufffe",
  "𝕏𝕐ℤ",
  "👩‍👩‍👧‍👦".repeat(50),
  `e${"\u0301".repeat(2000)}`,
  "\u202eevil\u202c",
  "\u0085\u2028\u2029",
  "\u0001\u001f\u007f",
  "\t\r\n",
  "ｆｕｌｌｗｉｄｔｈ",
  "İıſ",
  "\u00a0",
  "<>&'\"",
  "%00%ff",
  "\\u0000",
  "[[sim:fail=80006]][[sim:stage=input]]",
  "[[sim:fail=12345]]",
  "[[sim:delay_ms=-1]]",
  `[[sim:${"x".repeat(1000)}]]`,
  "a".repeat(20_001),
];

const BAD_UTF8 = [
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xff],
  [0xfe, 0xff],
  [0xe2, 0x82],
  [0x80],
  [0x00],
  [0x01],
  [0x0a],
  [0x1f],
  [0x7f],
  [0xc3],
];

// One Buffer per shape, shared by every case that sends it: they are 1 MiB each.
const HOSTILE_SHAPES = HOSTILE_BODIES.map((hostile) => ({ ...hostile, bytes: Buffer.from(hostile.body) }));

export type Rand = () => number;
export const pick = <T>(r: Rand, items: readonly T[]): T => items[Math.floor(r() * items.length)]!;

export function validBody(endpoint: Endpoint): Record<string, unknown> {
  const field = ENDPOINT_INPUT_FIELD[endpoint];
  return { model: MODELS[endpoint], [field]: field === "input" ? ["hello"] : "a lighthouse at dusk" };
}

function randomValue(r: Rand, depth = 0): unknown {
  switch (Math.floor(r() * 9)) {
    case 0:
      return pick(r, HOSTILE_STRINGS);
    case 1:
      return pick(r, HOSTILE_NUMBERS);
    case 2:
      return null;
    case 3:
      return r() < 0.5;
    case 4:
      return depth > 3 ? [] : Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
    case 5:
      return depth > 3
        ? {}
        : Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, () => [pick(r, HOSTILE_STRINGS).slice(0, 40), randomValue(r, depth + 1)]));
    case 6:
      return pick(r, HOSTILE_WEBHOOK_URLS);
    case 7:
      return Math.floor(r() * 2000) - 1000;
    default:
      return "x".repeat(Math.floor(r() * 64));
  }
}

function json(body: unknown): Buffer {
  return Buffer.from(JSON.stringify(body));
}

export interface FuzzContext {
  auth: string;
  revokedAuth: string;
}

/** Every generator makes one case from the random source; the fuzzer draws from them in turn. */
export function generators(ctx: FuzzContext): Record<string, (r: Rand) => FuzzCase> {
  const submit = (r: Rand, body: Buffer, extra: Record<string, string | string[]> = {}): FuzzCase => ({
    category: "",
    method: "POST",
    path: ENDPOINT_PATHS[pick(r, ENDPOINTS)],
    headers: { authorization: ctx.auth, "content-type": "application/json", ...extra },
    body,
  });
  return {
    "mutated fields": (r) => {
      const endpoint = pick(r, ENDPOINTS);
      const body: Record<string, unknown> = validBody(endpoint);
      const keys = [
        ...Object.keys(body),
        "n",
        "size",
        "seed",
        "duration_seconds",
        "max_words",
        "webhook_url",
        "negative_prompt",
        "__proto__",
        "constructor",
        "prototype",
        pick(r, HOSTILE_STRINGS).slice(0, 30),
      ];
      for (let i = 0, n = 1 + Math.floor(r() * 3); i < n; i++) {
        const key = pick(r, keys);
        if (r() < 0.2) delete body[key];
        else body[key] = randomValue(r);
      }
      if (r() < 0.2) body.model = pick(r, [...Object.values(MODELS), "", "sim-image-2", "SIM-IMAGE-1", randomValue(r)]);
      return { ...submit(r, json(body)), path: ENDPOINT_PATHS[endpoint] };
    },
    "prototype keys": (r) => {
      const endpoint = pick(r, ENDPOINTS);
      const base = JSON.stringify(validBody(endpoint)).slice(0, -1);
      const poison = pick(r, [
        '"__proto__":{"credits":1e9}',
        '"constructor":{"prototype":{"admin":true}}',
        '"__proto__":null',
        '"model":"x","model":"sim-image-1"',
        '"__proto__":{"status":"completed"}',
      ]);
      return { ...submit(r, Buffer.from(`${base},${poison}}`)), path: ENDPOINT_PATHS[endpoint] };
    },
    "raw bodies": (r) => {
      const depth = 1 + Math.floor(r() * 20_000);
      const bodies = [
        "",
        "{",
        "}",
        '{"model":',
        "null",
        "[]",
        "[{}]",
        "0",
        '"str"',
        '{"a":1}{"b":2}',
        "{'model':'x'}",
        '{"model":"sim-image-1",}',
        "\ufeff{}",
        "[".repeat(depth) + "]".repeat(depth),
        '{"a":'.repeat(depth % 5000) + "1" + "}".repeat(depth % 5000),
        '{"model":"\\ud800"}',
        '{"model":"\\u0000"}',
      ];
      const body = r() < 0.1 ? Buffer.from(Array.from({ length: 1 + Math.floor(r() * 2048) }, () => Math.floor(r() * 256))) : Buffer.from(pick(r, bodies));
      return submit(r, body);
    },
    // Bodies under 1 MiB whose shape used to hold the event loop for up to a second.
    "hostile shapes": (r) => {
      const hostile = pick(r, HOSTILE_SHAPES);
      return { ...submit(r, hostile.bytes), path: hostile.path, expect: hostile.expect };
    },
    "huge bodies": (r) => {
      const size = pick(r, [1024 * 1024 - 10, 1024 * 1024 + 1, 2 * 1024 * 1024, 3_000_000]);
      return submit(r, Buffer.from(`{"model":"sim-image-1","prompt":"${"a".repeat(size)}"}`));
    },
    "content types": (r) => submit(r, json(validBody("images")), { "content-type": pick(r, CONTENT_TYPES) }),
    "content encodings": (r) =>
      submit(r, r() < 0.5 ? json(validBody("images")) : Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]), { "content-encoding": pick(r, ENCODINGS) }),
    "webhook urls": (r) => {
      const endpoint = pick(r, ENDPOINTS);
      const url = pick(r, HOSTILE_WEBHOOK_URLS);
      const expect = expectedForWebhookUrl(url);
      return { ...submit(r, json({ ...validBody(endpoint), webhook_url: url })), path: ENDPOINT_PATHS[endpoint], ...(expect === undefined ? {} : { expect }) };
    },
    numbers: (r) => {
      // Raw literals, since JSON.stringify cannot write 1e309, -0 or 9007199254740993 as sent.
      const endpoint = pick(r, ENDPOINTS);
      const field = r() < 0.7 ? (NUMERIC_FIELD[endpoint] ?? "n") : pick(r, [ENDPOINT_INPUT_FIELD[endpoint], "model", "webhook_url", "seed"]);
      const body = { ...validBody(endpoint) } as Record<string, unknown>;
      delete body[field];
      const text = JSON.stringify(body).slice(0, -1);
      return { ...submit(r, Buffer.from(`${text},"${field}":${pick(r, NUMBER_LITERALS)}}`)), path: ENDPOINT_PATHS[endpoint] };
    },
    "unicode text": (r) => {
      const endpoint = pick(r, ENDPOINTS);
      const field = r() < 0.8 ? ENDPOINT_INPUT_FIELD[endpoint] : pick(r, ["model", "webhook_url", "voice", "x"]);
      const base = { ...validBody(endpoint) } as Record<string, unknown>;
      delete base[field];
      const head = Buffer.from(`${JSON.stringify(base).slice(0, -1)},"${field}":`);
      if (r() < 0.35) {
        // Bytes that are not UTF-8, or raw control characters JSON forbids, inside a string.
        return { ...submit(r, Buffer.concat([head, Buffer.from('"a'), Buffer.from(pick(r, BAD_UTF8)), Buffer.from('b"}')])), path: ENDPOINT_PATHS[endpoint] };
      }
      const value = pick(r, HOSTILE_TEXT);
      const wrapped = field === "input" && r() < 0.5 ? [value, "ok", value] : value;
      return { ...submit(r, Buffer.concat([head, Buffer.from(`${JSON.stringify(wrapped)}}`)])), path: ENDPOINT_PATHS[endpoint] };
    },
    "duplicate keys": (r) => {
      const endpoint = pick(r, ENDPOINTS);
      const input = ENDPOINT_INPUT_FIELD[endpoint];
      const model = JSON.stringify(MODELS[endpoint]);
      const text = pick(r, [
        `{"model":${model},"${input}":"a","${input}":"b"}`,
        `{"model":"nope","model":${model},"${input}":"a"}`,
        `{"model":${model},"model":"nope","${input}":"a"}`,
        `{"model":${model},"${input}":"a","webhook_url":"https://127.0.0.1/x","webhook_url":"https://hooks.example.com/x"}`,
        `{"model":${model},"${input}":"a","webhook_url":"https://hooks.example.com/x","webhook_url":"https://127.0.0.1/x"}`,
        `{"model":${model},"${input}":"a","n":1,"n":99}`,
        `{"model":${model},"${input}":"a","${input}":null}`,
        `{"model":${model},"${input}":"a","__proto__":{},"__proto__":{"model":"x"}}`,
        `{"model":${model},"${"\\u0069"}nput":"a","${input}":"a"}`,
      ]);
      return { ...submit(r, Buffer.from(text)), path: ENDPOINT_PATHS[endpoint] };
    },
    authorization: (r) => {
      const value = pick(r, [...AUTH_HEADERS, ctx.revokedAuth]);
      const headers: Record<string, string | string[]> = { "content-type": "application/json" };
      if (value !== "") headers.authorization = r() < 0.1 ? [value, ctx.auth] : value;
      const get = r() < 0.5;
      return {
        category: "",
        method: get ? "GET" : "POST",
        path: get ? pick(r, ["/api/v1/account", `/api/v1/tasks/task_${"0".repeat(32)}`]) : ENDPOINT_PATHS.images,
        headers,
        body: get ? undefined : json(validBody("images")),
      };
    },
    "idempotency keys": (r) => {
      const key = pick(r, ["", " ", "a".repeat(256), "a".repeat(257), "a".repeat(10_000), "k-1", "k-1", "ключ", "\u00ff", `k-${Math.floor(r() * 5)}`]);
      const endpoint = pick(r, ENDPOINTS);
      return {
        ...submit(r, json(r() < 0.5 ? validBody(endpoint) : { ...validBody(endpoint), seed: Math.floor(r() * 3) }), {
          "idempotency-key": Buffer.from(key, "utf8").toString("latin1"),
        }),
        path: ENDPOINT_PATHS[endpoint],
      };
    },
    "task ids": (r) => {
      const id = pick(r, TASK_IDS);
      const cancel = r() < 0.3;
      return { category: "", method: cancel ? "POST" : "GET", path: `/api/v1/tasks/${id}${cancel ? "/cancel" : ""}`, headers: { authorization: ctx.auth } };
    },
    "query strings": (r) => {
      const include = pick(r, [
        "webhook",
        "billing",
        "webhook,billing",
        "WEBHOOK",
        "",
        ",",
        "webhook,,billing",
        "x".repeat(7000),
        "__proto__",
        "webhook&include=billing",
        "include",
        "webhook%00",
      ]);
      const extra = pick(r, [
        "",
        "&include[]=x",
        "&include[a]=b",
        "&a=1&a=2&a=3",
        `&${"p=1&".repeat(1000)}`,
        "&%zz=1",
        "&=&=&",
        "&include=webhook&include=webhook",
      ]);
      return { category: "", method: "GET", path: `/api/v1/tasks/task_${"0".repeat(32)}?include=${include}${extra}`, headers: { authorization: ctx.auth } };
    },
    "methods and paths": (r) => {
      const method = pick(r, ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "PROPFIND", "PURGE"]);
      const path = pick(r, [
        "/api/v1",
        "/api/v1/",
        "/api/v2/images/generations",
        "/api/v1/images",
        "/api/v1/images/generations/",
        "/api/v1//images/generations",
        "/API/V1/ACCOUNT",
        "/api/v1/tasks",
        "/api/v1/tasks/",
        "/api/v1/account/x",
        "/api/v1/%2e%2e/healthz",
        "/api/v1/images%2Fgenerations",
        "/cdn/../package.json",
        "/cdn/%2e%2e/%2e%2e/etc/passwd",
        "/cdn/.env",
        "/docs/../../",
        "/metrics/x",
        "/healthz?x=1",
        "/readyz",
        "/",
        "/favicon.ico",
        "/api",
        "/%",
        "/api/v1/moderations?__proto__[x]=1",
      ]);
      return {
        category: "",
        method,
        path,
        headers: { authorization: ctx.auth, "content-type": "application/json" },
        body: method === "GET" || method === "HEAD" ? undefined : json({}),
      };
    },
    headers: (r) => {
      const headers: Record<string, string | string[]> = { authorization: ctx.auth, "content-type": "application/json" };
      const choice = Math.floor(r() * 6);
      if (choice === 0)
        headers.origin = pick(r, [
          "https://evil.example",
          "null",
          "http://localhost:8080",
          "https://app.example.com",
          "file://",
          "*",
          "https://app.example.com.evil.example",
        ]);
      if (choice === 1) headers["x-request-id"] = pick(r, ["req_x", "", "a".repeat(4000), "\u00ff"]);
      if (choice === 2) headers["x-forwarded-for"] = pick(r, ["1.2.3.4", "garbage", "::1, 127.0.0.1", "a".repeat(4000)]);
      if (choice === 3) headers.accept = pick(r, ["text/html", "application/xml", "*/*;q=0", "", "application/json;q=0, text/html;q=0"]);
      if (choice === 4) headers["x-big"] = "a".repeat(Math.floor(r() * 12_000));
      if (choice === 5) headers["content-type"] = ["application/json", "text/plain"];
      return { ...submit(r, json(validBody("images")), headers), headers };
    },
    "console without a session": (r) => ({
      category: "",
      method: pick(r, ["GET", "POST", "PUT", "DELETE"]),
      path: pick(r, [
        "/console",
        "/console/",
        "/console/queues",
        "/console/queues/api/queues",
        "/console/deliveries/task_x",
        "/console/deliveries/stats.json",
        "/console/sign-out",
        "/console/assets/../../package.json",
        "/console/sign-in?next=https://evil.example",
      ]),
      headers: {
        accept: pick(r, ["text/html", "application/json", "*/*"]),
        cookie: pick(r, ["", "gen_console=forged", `gen_console=${"A".repeat(43)}`, "gen_console=%00"]),
      },
    }),
    "malformed http": (r) => {
      const raw = pick(r, [
        "GET / HTTP/1.1\r\n\r\n",
        "GARBAGE\r\n\r\n",
        "GET /api/v1/account HTTP/9.9\r\nHost: x\r\n\r\n",
        "GET /api/v1/account HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
        "POST /api/v1/detect HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
        "POST /api/v1/detect HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        "POST /api/v1/detect HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        `GET /api/v1/account HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
        "GET /api/v1/account HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_\u00ff\u0000x\r\n\r\n",
        "GET \u0000 HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /api/v1/detect HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
      ]);
      return { category: "", method: "RAW", path: "", headers: {}, raw: Buffer.from(raw, "latin1") };
    },
  };
}
