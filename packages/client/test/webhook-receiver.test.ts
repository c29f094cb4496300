import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createWebhookReceiver, GenClient, type Task, type WebhookReceiver, type WebhookReceiverOptions } from "../src/index.ts";
import { envelope, startFakeApi, task, type FakeApi } from "./fake-api.ts";

const A = "task_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const B = "task_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const FORGED = "task_ffffffffffffffffffffffffffffffff";

let api: FakeApi;
let client: GenClient;
let receiver: WebhookReceiver;
let delivered: Task[];
let errors: unknown[];

function make(overrides: Partial<WebhookReceiverOptions> = {}): WebhookReceiver {
  receiver = createWebhookReceiver({
    client,
    onTask: (t) => {
      delivered.push(t);
    },
    onError: (e) => errors.push(e),
    expectedMs: 60_000,
    checkIntervalMs: 10,
    lookupsPerSecond: 1000,
    lookupBurst: 100,
    ...overrides,
  });
  return receiver;
}

const gets = (id: string) => api.requests.filter((r) => r.method === "GET" && r.url.startsWith(`/api/v1/tasks/${id}`)).length;
const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
};

beforeEach(async () => {
  api = await startFakeApi();
  client = new GenClient({ baseUrl: api.baseUrl, apiKey: "sk_test", retryBackoff: { initialMs: 5, maxMs: 20 }, pollBackoff: { initialMs: 5, maxMs: 20 } });
  delivered = [];
  errors = [];
});
afterEach(async () => {
  await receiver?.close();
  await api.close();
});

describe("deliveries", () => {
  test("a tracked id is answered 200 at once, verified with the API, and onTask gets the API's task", async () => {
    api.route(`GET /api/v1/tasks/${A}`, [{ status: 200, body: task(A, "completed") }]);
    make().track(A);
    // The body's own claims are not believed: only the id is used.
    const result = receiver.handle(JSON.stringify({ ...task(A, "completed"), output: { image_urls: ["https://evil.example/x.png"] } }));
    expect(result).toEqual({ status: 200, accepted: true });
    expect(delivered).toHaveLength(0); // nothing ran before the answer
    await receiver.idle();
    expect(gets(A)).toBe(1);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.output).toEqual({ image_urls: ["http://cdn/x.png"] });
    expect(receiver.pendingIds()).toEqual([]);
  });

  test("unknown or forged ids get 200, no lookup and no onTask", async () => {
    make().track(A);
    expect(receiver.handle(JSON.stringify(task(FORGED, "completed")))).toEqual({ status: 200, accepted: false });
    expect(receiver.handle({ id: "task_not_even_plausible" }).status).toBe(200);
    await receiver.idle();
    expect(api.requests).toHaveLength(0);
    expect(delivered).toHaveLength(0);
    expect(receiver.pendingIds()).toEqual([A]);
  });

  test("malformed bodies get 400", () => {
    make();
    expect(receiver.handle("{not json").status).toBe(400);
    expect(receiver.handle(Buffer.from("[1,2]")).status).toBe(400);
    expect(receiver.handle({ nope: 1 }).status).toBe(400);
  });

  test("repeated deliveries of one id (concurrent and later) are one event", async () => {
    api.route(`GET /api/v1/tasks/${A}`, [{ status: 200, body: task(A, "failed", { error: { code: 80003, message: "x" } }) }]);
    make().track(A);
    const body = Buffer.from(JSON.stringify(task(A, "failed")));
    const results = [receiver.handle(body), receiver.handle(body), receiver.handle(body)];
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.filter((r) => r.accepted)).toHaveLength(1);
    await receiver.idle();
    expect(receiver.handle(body)).toEqual({ status: 200, accepted: false });
    await receiver.idle();
    expect(gets(A)).toBe(1);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.error?.code).toBe(80003);
  });

  test("a call for a tracked id whose task is still running is ignored until the real one", async () => {
    api.route(`GET /api/v1/tasks/${A}`, [
      { status: 200, body: task(A, "in_progress") },
      { status: 200, body: task(A, "completed") },
    ]);
    make().track(A);
    expect(receiver.handle({ id: A }).accepted).toBe(true);
    await receiver.idle();
    expect(delivered).toHaveLength(0);
    expect(receiver.pendingIds()).toEqual([A]);
    expect(receiver.handle({ id: A }).accepted).toBe(true);
    await receiver.idle();
    expect(delivered.map((t) => t.status)).toEqual(["completed"]);
  });

  test("a webhook that beats track() is verified as soon as the id is tracked", async () => {
    api.route(`GET /api/v1/tasks/${A}`, [{ status: 200, body: task(A, "completed") }]);
    make();
    expect(receiver.handle({ id: A }).accepted).toBe(false);
    receiver.track({ id: A });
    await until(() => delivered.length === 1);
  });

  test("a 404 on verification drops the id and reports it", async () => {
    api.route(`GET /api/v1/tasks/${A}`, [{ status: 404, body: envelope(40001, "Task not found") }]);
    make().track(A);
    receiver.handle({ id: A });
    await receiver.idle();
    expect(delivered).toHaveLength(0);
    expect(receiver.pendingIds()).toEqual([]);
    expect(errors).toEqual([expect.objectContaining({ code: 40001 })]);
  });

  test("an onTask that throws is reported, not repeated", async () => {
    api.route(`GET /api/v1/tasks/${A}`, [{ status: 200, body: task(A, "completed") }]);
    make({ onTask: () => Promise.reject(new Error("handler broke")) }).track(A);
    receiver.handle({ id: A });
    await receiver.idle();
    receiver.handle({ id: A });
    await receiver.idle();
    expect(errors).toEqual([expect.objectContaining({ message: "handler broke" })]);
    expect(gets(A)).toBe(1);
  });
});

describe("throttling", () => {
  test("lookups respect the concurrency limit and the token bucket", async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const started: number[] = [];
    const stub = {
      async getTask(id: string) {
        started.push(Date.now());
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await new Promise((r) => setTimeout(r, 10));
        inFlight--;
        return task(id, "completed") as unknown as Task<any>;
      },
      waitForTask: () => Promise.reject(new Error("not used")),
    };
    make({ client: stub as unknown as GenClient, verifyConcurrency: 2, lookupsPerSecond: 20, lookupBurst: 2 });
    const ids = Array.from({ length: 8 }, (_, i) => `task_${String(i).repeat(32)}`);
    for (const id of ids) receiver.track(id);
    for (const id of ids) expect(receiver.handle({ id }).status).toBe(200);
    await receiver.idle();
    expect(delivered).toHaveLength(8);
    expect(maxInFlight).toBeLessThanOrEqual(2);
    // burst 2, then 20/s: the 8th lookup cannot start before ~300 ms.
    expect(started[7]! - started[0]!).toBeGreaterThanOrEqual(250);
  });
});

describe("fallback poll", () => {
  test("an id with no webhook after expected time + grace is polled and delivered once", async () => {
    api.route(`GET /api/v1/tasks/${A}`, [
      { status: 200, body: task(A, "in_progress") },
      { status: 200, body: task(A, "completed") },
    ]);
    api.route(`GET /api/v1/tasks/${B}`, [{ status: 200, body: task(B, "completed") }]);
    make({ fallbackGraceMs: 20, fallbackPollBackoff: { initialMs: 5, maxMs: 20 } });
    receiver.track(A, 30);
    receiver.track(B, 60_000); // not overdue: never polled
    expect(gets(A)).toBe(0);
    await until(() => delivered.length === 1);
    expect(delivered[0]!.id).toBe(A);
    expect(gets(A)).toBe(2);
    // A late webhook after the poll delivered it changes nothing.
    expect(receiver.handle({ id: A }).accepted).toBe(false);
    await new Promise((r) => setTimeout(r, 60));
    await receiver.idle();
    expect(delivered).toHaveLength(1);
    expect(gets(B)).toBe(0);
    expect(receiver.pendingIds()).toEqual([B]);
  });

  test("a webhook during the fallback poll is ignored; the poll delivers", async () => {
    api.route(`GET /api/v1/tasks/${A}`, [
      { status: 200, body: task(A, "in_progress") },
      { status: 200, body: task(A, "in_progress") },
      { status: 200, body: task(A, "completed") },
    ]);
    make({ fallbackGraceMs: 0, fallbackPollBackoff: { initialMs: 30, maxMs: 30 } });
    receiver.track(A, 0);
    await until(() => gets(A) >= 1);
    expect(receiver.handle({ id: A }).accepted).toBe(false);
    await until(() => delivered.length === 1);
    await receiver.idle();
    expect(delivered).toHaveLength(1);
    expect(gets(A)).toBe(3);
  });

  test("close() stops the timers: nothing is polled afterwards", async () => {
    api.route(`GET /api/v1/tasks/${A}`, [{ status: 200, body: task(A, "completed") }]);
    make({ fallbackGraceMs: 0 });
    receiver.track(A, 40);
    await receiver.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(api.requests).toHaveLength(0);
    expect(receiver.handle({ id: A })).toEqual({ status: 200, accepted: false });
  });
});

describe("nodeHandler", () => {
  test("works as a node:http handler", async () => {
    api.route(`GET /api/v1/tasks/${A}`, [{ status: 200, body: task(A, "completed") }]);
    make({ maxBodyBytes: 1024 }).track(A);
    const server = http.createServer(receiver.nodeHandler());
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/tasks?secret=s`;
    try {
      const post = (body: string) => fetch(url, { method: "POST", headers: { "Content-Type": "application/json", "User-Agent": "service-Webhook/1" }, body });
      expect((await post(JSON.stringify(task(A, "completed")))).status).toBe(200);
      expect((await post(JSON.stringify(task(FORGED, "completed")))).status).toBe(200);
      expect((await post("garbage")).status).toBe(400);
      expect((await fetch(url)).status).toBe(405);
      expect((await post(JSON.stringify({ id: A, pad: "x".repeat(2048) }))).status).toBe(413);
      await until(() => delivered.length === 1);
      await receiver.idle();
      expect(delivered.map((t) => t.id)).toEqual([A]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  test("uses a body an Express parser already read", () => {
    make().track(A);
    const respond = (body: unknown) => {
      const res = {
        headersSent: false,
        statusCode: 0,
        writeHead(status: number) {
          this.statusCode = status;
          return this;
        },
        end() {
          this.headersSent = true;
        },
      };
      receiver.nodeHandler()({ method: "POST", body } as any, res as any);
      return res.statusCode;
    };
    expect(respond({ id: A })).toBe(200);
    expect(respond(Buffer.from(JSON.stringify({ id: FORGED })))).toBe(200);
    expect(respond("not json")).toBe(400);
    expect(receiver.pendingIds()).toEqual([A]); // verification of A is queued, not yet done
  });
});
