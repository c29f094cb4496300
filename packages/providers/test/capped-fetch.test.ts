import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { AnswerTooLargeError } from "@gen/capped-body";
import { createCappedFetch } from "../src/capped-fetch.ts";
import { closeServer, listenOnLoopback } from "./support/loopback-server.ts";

// The fetch the SDKs are given: their plain requests over keep-alive node:http, anything else
// through the platform's fetch, both answering as fetch does and bounded alike.
let server: Server;
let base: string;
const seen: Array<{ method: string; url: string; headers: IncomingMessage["headers"]; body: string }> = [];

function route(req: IncomingMessage, res: ServerResponse, body: string): void {
  switch (req.url) {
    case "/json":
      res.writeHead(201, { "content-type": "application/json", "x-request-id": "req_1" }).end(JSON.stringify({ echo: body }));
      return;
    case "/empty":
      res.writeHead(204).end();
      return;
    case "/moved":
      res.writeHead(307, { location: "/json" }).end();
      return;
    case "/declared-huge":
      res.writeHead(200, { "content-length": String(10 * 1024 * 1024) }).write("x");
      return;
    case "/endless":
      res.writeHead(200);
      for (let i = 0; i < 64; i++) res.write("x".repeat(1024));
      return;
    case "/stalled":
      res.writeHead(200).write("{");
      return;
    case "/cut":
      res.writeHead(200, { "content-length": "100" }).write("{", () => req.socket.destroy());
      return;
    default:
      res.writeHead(404).end("no");
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      route(req, res, body);
    });
  });
  base = await listenOnLoopback(server);
});
afterAll(() => closeServer(server));

const capped = () => createCappedFetch({ maxBytes: 16 * 1024, timeoutMs: 1000 });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error("resolved"),
    (error: unknown) => error,
  );
}

test("a JSON request is sent as given and answered as fetch answers: status, headers, body", async () => {
  const fetch = capped();
  const answer = await fetch(`${base}/json`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: "Bearer k" }, body: '{"a":1}' });
  expect({ status: answer.status, ok: answer.ok, requestId: answer.headers.get("x-request-id") }).toEqual({ status: 201, ok: true, requestId: "req_1" });
  expect(await answer.json()).toEqual({ echo: '{"a":1}' });
  expect(seen.at(-1)).toMatchObject({ method: "POST", headers: { "content-type": "application/json", authorization: "Bearer k", "content-length": "7" } });
  const bytes = await fetch(new URL(`${base}/json`), { method: "POST", body: new TextEncoder().encode("é") });
  expect(await bytes.json()).toEqual({ echo: "é" });
  const empty = await fetch(`${base}/empty`);
  expect({ status: empty.status, body: empty.body }).toEqual({ status: 204, body: null });
});

test("a redirect, a form upload and a Request object go through the platform's fetch, with the same answer", async () => {
  const fetch = capped();
  const moved = await fetch(`${base}/moved`, { method: "POST", body: "again" });
  expect(await moved.json()).toEqual({ echo: "again" });
  const form = new FormData();
  form.append("prompt", "a cat");
  const upload = await fetch(`${base}/json`, { method: "POST", body: form });
  expect(((await upload.json()) as { echo: string }).echo).toContain('name="prompt"');
  expect(seen.at(-1)!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
  const request = await fetch(new Request(`${base}/json`, { method: "POST", body: "r" }));
  expect(await request.json()).toEqual({ echo: "r" });
});

test("huge, endless, stalled and cut answers end at the cap or the time limit; nothing listening is a network error", async () => {
  const fetch = capped();
  expect(await rejection(fetch(`${base}/declared-huge`))).toMatchObject({ name: "AnswerTooLargeError", declared: 10 * 1024 * 1024 });
  expect(await rejection(fetch(`${base}/endless`))).toBeInstanceOf(AnswerTooLargeError);
  expect(await rejection(fetch(`${base}/stalled`))).toMatchObject({ name: "TimeoutError" });
  expect(await rejection(fetch(`${base}/cut`))).toMatchObject({ name: "TypeError", message: "fetch failed" });
  const closed = createServer();
  const url = await listenOnLoopback(closed);
  await closeServer(closed);
  expect(await rejection(fetch(url))).toMatchObject({ name: "TypeError", message: "fetch failed", cause: { code: "ECONNREFUSED" } });
  // The connections the refused answers cut do not hold back the next request.
  expect((await fetch(`${base}/json`, { method: "POST", body: "still" })).status).toBe(201);
});

test("the caller's abort rejects with its reason, before and during the exchange", async () => {
  const fetch = capped();
  expect(await rejection(fetch(`${base}/json`, { signal: AbortSignal.abort(new Error("gone")) }))).toMatchObject({ message: "gone" });
  const controller = new AbortController();
  const pending = rejection(fetch(`${base}/stalled`, { signal: controller.signal }));
  setTimeout(() => controller.abort(new Error("shutting down")), 50);
  expect(await pending).toMatchObject({ message: "shutting down" });
});
