import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import type { Request, Response } from "express";
import { jsonBody } from "../src/middleware/json-body.ts";

// The body reader alone: the plain case (Content-Length, no encodings) is read by json-body.ts's own
// listeners, everything else by body-parser; both must hand the route the same object.
let server: Server;
let port: number;
let outcomes: ((outcome: unknown) => void)[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const read = () =>
      jsonBody(req as Request, res as unknown as Response, (error?: unknown) => {
        const outcome = error ? { code: (error as { code?: number }).code } : { body: (req as Request).body as unknown };
        // `x-late`: how the body was taken (the listener path sets the stream flowing).
        const late = req.headers["x-late"] === undefined ? {} : { flowing: req.readableFlowing === true };
        outcomes.shift()?.({ ...outcome, ...late });
        if (!res.destroyed) res.end(JSON.stringify(outcome));
      });
    // `x-late`: the reader runs once the whole request is in, as it does behind auth and the limiter.
    const whenComplete = () => (req.complete ? read() : setImmediate(whenComplete));
    if (req.headers["x-late"] === undefined) read();
    else whenComplete();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends the head and the body pieces as separate writes; resolves with what the middleware answered. */
function send(headers: Record<string, string | number>, pieces: Buffer[], close = false): Promise<unknown> {
  const answered = new Promise<unknown>((resolve) => outcomes.push(resolve));
  const socket = connect(port, "127.0.0.1");
  const head = Object.entries({ host: "x", "content-type": "application/json", ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  socket.write(`POST / HTTP/1.1\r\n${head}connection: close\r\n\r\n`);
  let i = 0;
  const next = () => {
    if (i < pieces.length) socket.write(pieces[i++]!, () => setTimeout(next, 20));
    else if (close) socket.destroy();
  };
  next();
  socket.on("error", () => {});
  socket.resume();
  return answered;
}

const text = JSON.stringify({ prompt: "a lighthouse at dusk, \u00e9t\u00e9 \u{1f3ee}", n: 1 });
const bytes = Buffer.from(text, "utf8");

describe("jsonBody", () => {
  afterEach(() => {
    outcomes = [];
  });

  it("reads a plain body sent in pieces, a character split between them", async () => {
    const split = bytes.indexOf(0xc3) + 1;
    expect(await send({ "content-length": bytes.length }, [bytes.subarray(0, split), bytes.subarray(split)])).toEqual({ body: JSON.parse(text) });
  });

  it("takes a body already buffered when it runs (behind auth and the limiter) with one read, no listeners", async () => {
    expect(await send({ "content-length": bytes.length, "x-late": 1 }, [bytes])).toEqual({ body: JSON.parse(text), flowing: false });
    const split = bytes.indexOf(0xc3) + 1;
    expect(await send({ "content-length": bytes.length, "x-late": 1 }, [bytes.subarray(0, split), bytes.subarray(split)])).toEqual({
      body: JSON.parse(text),
      flowing: false,
    });
  });

  it("reads chunked and gzip bodies through body-parser as before", async () => {
    const chunked = Buffer.from(`${bytes.length.toString(16)}\r\n${text}\r\n0\r\n\r\n`, "utf8");
    expect(await send({ "transfer-encoding": "chunked" }, [chunked])).toEqual({ body: JSON.parse(text) });
    const gzipped = gzipSync(bytes);
    expect(await send({ "content-encoding": "gzip", "content-length": gzipped.length }, [gzipped])).toEqual({ body: JSON.parse(text) });
  });

  it("answers a body cut short (the client went away) with 20001, never hangs", async () => {
    expect(await send({ "content-length": bytes.length + 10 }, [bytes], true)).toEqual({ code: 20001 });
  });

  it("refuses over 1 MiB with 20008 (body-parser, unread) and a non-JSON type with 20001", async () => {
    expect(await send({ "content-length": 1024 * 1024 + 1 }, [Buffer.from("{}")], true)).toEqual({ code: 20008 });
    expect(await send({ "content-length": bytes.length, "content-type": "text/plain" }, [bytes])).toEqual({ code: 20001 });
  });
});
