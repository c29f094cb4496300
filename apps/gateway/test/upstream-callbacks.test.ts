import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import type { Request } from "express";
import { pathOf } from "@gen/http";
import { callbackToken, newTaskId } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, takeUpstreamCallback } from "@gen/queues";
import { createTestGateway, type TestGateway } from "./support/test-gateway.ts";

const SECRET = "callback-secret-for-tests-0123456789";
let gw: TestGateway;
let server: http.Server;
let port: number;

beforeAll(async () => {
  gw = await createTestGateway({ UPSTREAM_CALLBACK_URL: "http://127.0.0.1:8080", UPSTREAM_CALLBACK_SECRET: SECRET });
  server = http.createServer(gw.app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await gw.close();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function post(path: string, body: string | Buffer = "{}", headers: http.OutgoingHttpHeaders = { "content-type": "application/json" }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method: "POST", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A task parked between polls: its generation job delayed for ten minutes. */
async function parkedTask(): Promise<string> {
  const taskId = newTaskId();
  await gw.deps.generationQueue.add("generate", { taskId }, { ...GENERATION_JOB_OPTIONS, jobId: taskId, delay: 600_000 });
  return taskId;
}

const state = (taskId: string) => gw.deps.generationQueue.getJobState(taskId);

test("a valid token makes the task's parked job run now, whatever the body says", async () => {
  const taskId = await parkedTask();
  const res = await post(`/upstream-callbacks/${callbackToken(SECRET, taskId)}`, JSON.stringify({ status: "succeeded", output: ["https://evil.test/x.png"] }));
  expect(res.status).toBe(204);
  expect(await state(taskId)).toBe("waiting");
});

test("a replayed callback finds the job already woken and changes nothing more", async () => {
  const taskId = await parkedTask();
  const path = `/upstream-callbacks/${callbackToken(SECRET, taskId)}`;
  expect((await post(path)).status).toBe(204);
  const counts = await gw.deps.generationQueue.getJobCounts("waiting", "delayed");
  for (let i = 0; i < 5; i++) expect((await post(path)).status).toBe(204);
  expect(await gw.deps.generationQueue.getJobCounts("waiting", "delayed")).toEqual(counts);
  expect(await state(taskId)).toBe("waiting");
});

test("a finished task (its job gone) is answered the same, and nothing is enqueued for it", async () => {
  const taskId = newTaskId();
  expect((await post(`/upstream-callbacks/${callbackToken(SECRET, taskId)}`)).status).toBe(204);
  expect(await gw.deps.generationQueue.getJob(taskId)).toBeUndefined();
});

test("a callback while the task's step runs is left as a mark for the worker", async () => {
  const taskId = newTaskId();
  await gw.deps.generationQueue.add("generate", { taskId }, { ...GENERATION_JOB_OPTIONS, jobId: taskId });
  expect((await post(`/upstream-callbacks/${callbackToken(SECRET, taskId)}`)).status).toBe(204);
  expect(await takeUpstreamCallback(gw.deps.redis, gw.deps.config.queuePrefix, taskId)).toBe(true);
});

test("a forged or malformed token is an unknown route, and wakes nothing", async () => {
  const taskId = await parkedTask();
  const forged = callbackToken("another-secret-of-32-characters!!", taskId);
  for (const path of [`/upstream-callbacks/${forged}`, `/upstream-callbacks/${taskId}`, "/upstream-callbacks/x.y", "/upstream-callbacks/"]) {
    const res = await post(path);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body).error.code).toBe(40002);
  }
  expect(await state(taskId)).toBe("delayed");
});

test("a declared body over 64 KiB is refused at once, before it is sent, and the connection closes", async () => {
  const taskId = await parkedTask();
  const socket = net.connect(port, "127.0.0.1");
  const answer = new Promise<string>((resolve) => {
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString("latin1")));
    socket.on("close", () => resolve(text));
  });
  // Headers only: the 100 MB never come.
  socket.write(
    `POST /upstream-callbacks/${callbackToken(SECRET, taskId)} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n`,
  );
  const text = await answer;
  expect(text).toMatch(/^HTTP\/1.1 413 /);
  expect(text).toMatch(/"code":20008/);
  expect(await state(taskId)).toBe("delayed");
});

test("an endless chunked body is cut at 64 KiB with 413 and the connection closed", async () => {
  const taskId = await parkedTask();
  const socket = net.connect(port, "127.0.0.1");
  let sent = 0;
  const chunk = Buffer.alloc(16 * 1024, "a");
  const answer = new Promise<string>((resolve) => {
    let text = "";
    socket.on("data", (data) => (text += data.toString("latin1")));
    socket.on("close", () => resolve(text));
    socket.on("error", () => undefined);
  });
  socket.write(`POST /upstream-callbacks/${callbackToken(SECRET, taskId)} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`);
  const timer = setInterval(() => {
    if (socket.destroyed || sent > 16 * 1024 * 1024) return clearInterval(timer);
    socket.write(`${chunk.length.toString(16)}\r\n`);
    socket.write(chunk);
    socket.write("\r\n");
    sent += chunk.length;
  }, 1);
  const text = await answer;
  clearInterval(timer);
  expect(text).toMatch(/^HTTP\/1.1 413 /);
  // The server stopped reading soon after the cap: far less than was offered.
  expect(sent).toBeLessThan(8 * 1024 * 1024);
  expect(await state(taskId)).toBe("delayed");
});

test("a body within the cap is read and dropped; the same connection serves the next request", async () => {
  const taskId = await parkedTask();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const path = `/upstream-callbacks/${callbackToken(SECRET, taskId)}`;
  const send = () =>
    new Promise<number>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, path, method: "POST", agent, headers: { "content-type": "application/octet-stream" } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode!));
      });
      req.on("error", reject);
      req.end(Buffer.alloc(60 * 1024, 1));
    });
  expect(await send()).toBe(204);
  expect(await send()).toBe(204);
  agent.destroy();
  expect(await state(taskId)).toBe("waiting");
});

test("without UPSTREAM_CALLBACK_URL the route does not exist", async () => {
  const plain = await createTestGateway();
  try {
    const res = await (
      await import("supertest")
    )
      .default(plain.app)
      .post(`/upstream-callbacks/${callbackToken(SECRET, newTaskId())}`)
      .send({});
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe(40002);
  } finally {
    await plain.close();
  }
});

test("request logs keep the task id of a callback's path, never its token's MAC", () => {
  const taskId = newTaskId();
  const token = callbackToken(SECRET, taskId);
  expect(pathOf({ originalUrl: `/upstream-callbacks/${token}?a=b` } as Request)).toBe(`/upstream-callbacks/${taskId}.<mac>`);
  expect(pathOf({ originalUrl: "/api/v1/tasks/x.y" } as Request)).toBe("/api/v1/tasks/x.y");
});
