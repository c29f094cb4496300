import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";

// Found by the fault suite's fuzzer: a request target Express's router cannot parse (absolute form
// with a broken host) skipped every middleware and got Express's HTML 404 without a request id.
// Only a raw socket can send one: HTTP clients build the request line themselves.
let gw: TestGateway;
let user: TestUser;
let server: http.Server;
let port: number;

beforeAll(async () => {
  gw = await createTestGateway();
  user = await createUser(gw.deps.db);
  server = http.createServer(gw.app).listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await gw.close();
});

/** Sends one request line and headers; resolves with the head and body of the answer. */
function rawRequest(requestLine: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(`${requestLine}\r\nHost: x\r\nAuthorization: ${user.auth}\r\nConnection: close\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const end = text.indexOf("\r\n\r\n");
      resolve({ head: text.slice(0, end), body: text.slice(end + 4) });
    });
  });
}

// A poll path with broken percent-encoding fails at the first route's match, before any middleware.
test.each([
  "GET http://[::1/api/v1/account HTTP/1.1",
  "POST http://[/api/v1/images/generations HTTP/1.1",
  "GET /api/v1/tasks/%zz HTTP/1.1",
  "GET /api/v1/tasks/task_%ff%fe HTTP/1.1",
])("%s is 404 with 40002 and a request id", async (line) => {
  const { head, body } = await rawRequest(line);
  expect(head).toMatch(/^HTTP\/1\.1 404 /);
  const requestId = /^x-request-id: (req_[0-9a-f]{24})$/im.exec(head)?.[1];
  expect(JSON.parse(body)).toEqual({ error: { code: 40002, message: expect.any(String), request_id: requestId } });
});

test("an absolute form with a valid host still reaches its route", async () => {
  const { head, body } = await rawRequest("GET http://gateway.example/api/v1/account HTTP/1.1");
  expect(head).toMatch(/^HTTP\/1\.1 200 /);
  expect(JSON.parse(body)).toEqual({ credits: 1000 });
});
