import zlib from "node:zlib";
import { ENDPOINT_PATHS } from "@gen/catalog";
import { pick, validBody, type FuzzCase, type FuzzContext, type Rand } from "./fuzz-cases.ts";

// Cases below the JSON: compressed and chunked bodies, request targets an HTTP client would never
// write, Expect, and clients that give up mid-request. Most go as raw bytes on a socket.

const IMAGES = ENDPOINT_PATHS.images;
const VALID = Buffer.from(JSON.stringify(validBody("images")));

function wire(auth: string, requestLine: string, headers: string[], body: Buffer | string = ""): Buffer {
  const head = [requestLine, "Host: x", `Authorization: ${auth}`, ...headers].join("\r\n");
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n`, "latin1"), Buffer.isBuffer(body) ? body : Buffer.from(body, "latin1")]);
}

function chunked(pieces: readonly string[], size = (piece: string) => piece.length.toString(16), end = "0\r\n\r\n"): string {
  return pieces.map((piece) => `${size(piece)}\r\n${piece}\r\n`).join("") + end;
}

function split(r: Rand, text: string): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length;) {
    const length = 1 + Math.floor(r() * 24);
    pieces.push(text.slice(at, at + length));
    at += length;
  }
  return pieces;
}

interface Encoded {
  encoding: string;
  body: Buffer;
  expect?: string;
}

let encoded: Encoded[] | undefined;

/** Built once: the bombs inflate 20 MiB out of ~20 KiB, far over the 1 MiB body limit. */
function encodedBodies(): Encoded[] {
  if (encoded) return encoded;
  const gzip = zlib.gzipSync(VALID);
  const bomb = Buffer.from(`{"model":"sim-image-1","prompt":"${"a".repeat(20 * 1024 * 1024)}"}`);
  encoded = [
    { encoding: "gzip", body: gzip, expect: "202" },
    { encoding: "deflate", body: zlib.deflateSync(VALID), expect: "202" },
    { encoding: "br", body: zlib.brotliCompressSync(VALID), expect: "202" },
    { encoding: "x-gzip", body: gzip, expect: "400/20001" },
    { encoding: "gzip", body: zlib.gzipSync(bomb), expect: "413/20008" },
    { encoding: "deflate", body: zlib.deflateSync(bomb), expect: "413/20008" },
    { encoding: "gzip", body: gzip.subarray(0, gzip.length - 8), expect: "400/20001" },
    { encoding: "deflate", body: gzip, expect: "400/20001" },
    { encoding: "gzip", body: zlib.gzipSync(gzip), expect: "400/20001" },
    { encoding: "gzip", body: zlib.gzipSync("[]"), expect: "400/20001" },
    { encoding: "gzip", body: zlib.gzipSync(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])) },
    { encoding: "gzip", body: Buffer.concat([gzip, Buffer.from("trailing bytes")]) },
    { encoding: "gzip", body: Buffer.alloc(0) },
  ];
  return encoded;
}

/** [method, request target, HTTP version, the answer our routing dictates (when it does)]. */
const TARGETS: [string, string, string, string | undefined][] = [
  ["GET", "http://gateway.example/api/v1/account", "HTTP/1.1", "200"],
  ["GET", "https://gateway.example:8443/api/v1/account?x=1", "HTTP/1.1", "200"],
  ["GET", "http://[::1/api/v1/account", "HTTP/1.1", "404/40002"],
  ["POST", "http://[/api/v1/images/generations", "HTTP/1.1", "404/40002"],
  ["GET", "http://user:pass@gateway.example/api/v1/account", "HTTP/1.1", undefined],
  ["OPTIONS", "*", "HTTP/1.1", "404/40002"],
  ["GET", "*", "HTTP/1.1", "404/40002"],
  ["GET", "//evil.example/api/v1/account", "HTTP/1.1", "404/40002"],
  ["GET", "/api/v1/./account", "HTTP/1.1", "404/40002"],
  ["GET", "/api/v1/account/..", "HTTP/1.1", "404/40002"],
  ["GET", "api/v1/account", "HTTP/1.1", undefined],
  ["GET", "/api/v1/account#fragment", "HTTP/1.1", undefined],
  ["GET", "/api/v1/acc\u00e9ount", "HTTP/1.1", undefined],
  ["GET", "/api/v1/account\u0007", "HTTP/1.1", undefined],
  ["GET", `/api/v1/tasks/${"a".repeat(20_000)}`, "HTTP/1.1", undefined],
  ["GET", `/api/v1/account?${"a=1&".repeat(3000)}`, "HTTP/1.1", "200"],
  ["GET", "/api/v1/account", "HTTP/1.0", "200"],
  ["GET", "/api/v1/account", "HTTP/2.0", undefined],
  ["GET", "/api/v1/account", "HTTP/1.2", undefined],
  ["FOO", "/api/v1/account", "HTTP/1.1", undefined],
];

/** Generators for the fuzzer, like fuzz-cases.ts's, a level below the JSON. */
export function wireGenerators(ctx: FuzzContext): Record<string, (r: Rand) => FuzzCase> {
  const raw = (bytes: Buffer, expect?: string, close?: FuzzCase["close"]): FuzzCase => ({
    category: "",
    method: "RAW",
    path: "",
    headers: {},
    raw: bytes,
    ...(expect === undefined ? {} : { expect }),
    ...(close === undefined ? {} : { close }),
  });
  return {
    "compressed bodies": (r) => {
      const { encoding, body, expect } = pick(r, encodedBodies());
      const headers = { authorization: ctx.auth, "content-type": "application/json", "content-encoding": encoding };
      return { category: "", method: "POST", path: IMAGES, headers, body, ...(expect === undefined ? {} : { expect }) };
    },
    "chunked bodies": (r) => {
      const text = VALID.toString("latin1");
      const [body, expect] = pick<[string, string | undefined]>(r, [
        [chunked(split(r, text)), "202"],
        [chunked(split(r, text), (p) => `${p.length.toString(16)};ext=${"v".repeat(Math.floor(r() * 40))}`), "202"],
        [chunked(split(r, text), (p) => p.length.toString(16).toUpperCase().padStart(6, "0")), "202"],
        [chunked(split(r, text), undefined, "0\r\nX-Trailer: 1\r\n\r\n"), "202"],
        [chunked(split(r, '{"model":')), "400/20001"],
        [chunked(Array.from({ length: 40 }, () => "a".repeat(64 * 1024))), "413/20008"],
        [chunked([text], () => "f".repeat(20)), undefined],
        [chunked([text], (p) => (p.length - 3).toString(16)), undefined],
        [chunked([text], () => "-1"), undefined],
      ]);
      return raw(wire(ctx.auth, `POST ${IMAGES} HTTP/1.1`, ["Content-Type: application/json", "Transfer-Encoding: chunked"], body), expect);
    },
    "request targets": (r) => {
      const [method, target, version, expect] = pick(r, TARGETS);
      return raw(
        wire(
          ctx.auth,
          `${method} ${target} ${version}`,
          method === "POST" ? ["Content-Type: application/json", `Content-Length: ${VALID.length}`] : [],
          method === "POST" ? VALID : "",
        ),
        expect,
      );
    },
    expectations: (r) => {
      const [expectHeader, body, expect] = pick<[string, Buffer, string | undefined]>(r, [
        ["100-continue", VALID, "202"],
        ["100-Continue", VALID, "202"],
        ["100-continue", Buffer.from("{"), "400/20001"],
        ["teapot", VALID, undefined],
        ["100-continue, x", VALID, undefined],
        ["", VALID, undefined],
      ]);
      return raw(
        wire(ctx.auth, `POST ${IMAGES} HTTP/1.1`, ["Content-Type: application/json", `Expect: ${expectHeader}`, `Content-Length: ${body.length}`], body),
        expect,
      );
    },
    "aborted requests": (r) => {
      const gzip = encodedBodies()[0]!.body;
      const close = r() < 0.5 ? "end" : "destroy";
      const bytes = pick(r, [
        wire(
          ctx.auth,
          `POST ${IMAGES} HTTP/1.1`,
          ["Content-Type: application/json", "Content-Length: 1000"],
          VALID.subarray(0, 1 + Math.floor(r() * VALID.length)),
        ),
        wire(ctx.auth, `POST ${IMAGES} HTTP/1.1`, ["Content-Type: application/json", "Content-Length: 50"]),
        wire(
          ctx.auth,
          `POST ${IMAGES} HTTP/1.1`,
          ["Content-Type: application/json", "Transfer-Encoding: chunked"],
          chunked(split(r, '{"model":"sim-image-1"'), undefined, ""),
        ),
        wire(
          ctx.auth,
          `POST ${IMAGES} HTTP/1.1`,
          ["Content-Type: application/json", "Content-Encoding: gzip", `Content-Length: ${gzip.length}`],
          gzip.subarray(0, gzip.length >> 1),
        ),
        wire(ctx.auth, "POST /console/sign-in HTTP/1.1", ["Content-Type: application/x-www-form-urlencoded", "Content-Length: 300"], "email=a%40b.c&pass"),
        Buffer.from(`POST ${IMAGES} HTTP/1.1\r\nHost: x\r\nAuthoriz`, "latin1"),
      ]);
      return raw(bytes, undefined, close);
    },
  };
}
