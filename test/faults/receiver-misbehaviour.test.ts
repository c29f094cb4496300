import { once } from "node:events";
import type http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import net from "node:net";
import tls from "node:tls";
import { createWebhookSender } from "@gen/webhook-sender";
import { fakeResolver } from "../../packages/webhook-sender/test/helpers/fake-resolver.ts";
import { issueServerCert } from "../../packages/webhook-sender/test/helpers/test-pki.ts";
import { HOST, createDeliveryFixture, type DeliveryFixture } from "../../apps/worker/test/delivery/helpers/delivery-fixture.ts";

// Injects: receivers that hang, trickle one byte per second, answer 2xx with a 100 MB body, reset
// the connection, redirect (301/302/307/308), or whose name resolves to a blocked address half of
// the time; 20 well-behaved receivers' tasks are mixed in. One real delivery worker and the real
// SSRF-guarded sender; the "blocked" address is 127.0.0.9, outside WEBHOOK_ALLOWED_CIDRS.
// Checks: each attempt's last_error is the contract's, no attempt outlives the timeout, the body is
// never read, redirects are never followed, 127.0.0.9 is never connected to, every webhook ends
// delivered or failed, and the good receivers are not held up by the bad ones.
const TIMEOUT_MS = 1_500;
const HALF_HOST = "half.test.example";
const BLOCKED_IP = "127.0.0.9";
const HUGE_BYTES = 100 * 1024 * 1024;

let fx: DeliveryFixture;
const servers: { close(): void }[] = [];
const openSockets = new Set<net.Socket>();

interface Behaviour {
  name: string;
  port: number;
  tasks: number;
}

async function listen(server: net.Server, host = "127.0.0.1", port = 0): Promise<number> {
  server.listen(port, host);
  await once(server, "listening");
  server.on("connection", (socket: net.Socket) => (openSockets.add(socket), socket.on("close", () => openSockets.delete(socket))));
  servers.push({ close: () => server.close() });
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  fx = await createDeliveryFixture({ timeoutMs: TIMEOUT_MS, retryDelayMs: 500, finalAttemptMs: 6_000 });
}, 30_000);
afterAll(async () => {
  for (const socket of openSockets) socket.destroy();
  for (const server of servers) server.close();
  await fx?.close();
});

test("hostile receivers get the contract's last_error and never slow the good ones", async () => {
  const tlsOptions = { ...(await issueServerCert([HOST, HALF_HOST], { ca: fx.ca })) };
  const counters = { redirectTarget: 0, blockedConnects: 0, hugeWritten: 0, trickled: 0 };

  const make = (handler: http.RequestListener) => {
    return https.createServer(tlsOptions, handler);
  };
  const good = await listen(make((_req, res) => res.writeHead(200).end("ok")));
  const hang = await listen(make(() => undefined));
  const huge = await listen(
    make((_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(HUGE_BYTES) });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = () => {
        while (counters.hugeWritten < HUGE_BYTES) {
          counters.hugeWritten += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      res.on("close", () => res.removeAllListeners("drain"));
      pump();
    }),
  );
  // RST as soon as the client speaks (its TLS hello): the connection dies before any answer.
  const reset = await listen(net.createServer((socket) => socket.once("data", () => socket.resetAndDestroy())));
  const target = await listen(make((_req, res) => (counters.redirectTarget++, res.writeHead(200).end())));
  const redirects = await Promise.all(
    [301, 302, 307, 308].map(async (status) => ({ status, port: await listen(make((_req, res) => res.writeHead(status, { location: `https://${HOST}:${target}/landed` }).end())) })),
  );
  // The status line, one byte a second: headers never complete within the timeout.
  const trickleServer = tls.createServer(tlsOptions, (socket) => {
    const text = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
    let i = 0;
    const timer = setInterval(() => {
      if (socket.destroyed || i >= text.length) return clearInterval(timer);
      counters.trickled++;
      socket.write(text[i++]!);
    }, 1_000);
    socket.on("close", () => clearInterval(timer));
    socket.on("error", () => undefined);
  });
  const trickle = await listen(trickleServer);
  // HALF_HOST's "blocked" answer: a listener there proves nothing ever connects.
  const trap = net.createServer((socket) => (counters.blockedConnects++, socket.destroy()));
  await listen(trap, BLOCKED_IP, good);

  let halfCalls = 0;
  const lookup = fakeResolver((hostname) => (hostname === HOST ? ["127.0.0.1"] : hostname === HALF_HOST ? (++halfCalls % 2 === 1 ? [BLOCKED_IP] : ["127.0.0.1"]) : { code: "ENOTFOUND" }));
  fx.startWorker({ sender: createWebhookSender({ timeoutMs: TIMEOUT_MS, allowedCidrs: ["127.0.0.1/32"], lookup, ca: fx.ca.cert }) });

  const behaviours: (Behaviour & { url?: string })[] = [
    { name: "good", port: good, tasks: 20 },
    { name: "hang", port: hang, tasks: 8 },
    { name: "trickle", port: trickle, tasks: 6 },
    { name: "huge", port: huge, tasks: 3 },
    { name: "reset", port: reset, tasks: 8 },
    ...redirects.map(({ status, port }) => ({ name: `redirect ${status}`, port, tasks: 2 })),
    { name: "half blocked", port: good, tasks: 8, url: `https://${HALF_HOST}:${good}/hooks?secret=x` },
  ];
  // Warm-up: a cold worker's first TLS handshakes and database connections are not what we measure.
  const warm = await Promise.all(Array.from({ length: 5 }, () => fx.createTask({ url: `https://${HOST}:${good}/warm` })));
  await Promise.all(warm.map((id) => fx.handOff(id)));
  await fx.waitFor(async () => (await fx.db.webhookDelivery.count({ where: { taskId: { in: warm }, status: "delivered" } })) === warm.length);
  const rssBefore = process.memoryUsage().rss;
  const tasks: { behaviour: string; id: string; finishedAt: Date }[] = [];
  for (const b of behaviours) {
    for (let i = 0; i < b.tasks; i++) tasks.push({ behaviour: b.name, id: await fx.createTask({ url: b.url ?? `https://${HOST}:${b.port}/hooks?secret=x` }), finishedAt: new Date(0) });
  }
  // All finish now, and their hand-offs go out interleaved, as real traffic would.
  const finishedAt = new Date();
  await fx.db.task.updateMany({ where: { id: { in: tasks.map((t) => t.id) } }, data: { finishedAt } });
  for (const t of tasks) t.finishedAt = finishedAt;
  await Promise.all(tasks.map((t) => fx.handOff(t.id)));

  const deliveries = await fx.waitFor(async () => {
    const rows = await fx.db.webhookDelivery.findMany({ where: { taskId: { in: tasks.map((t) => t.id) } } });
    return rows.every((r) => r.status === "delivered" || r.status === "failed") ? rows : undefined;
  }, 30_000);
  const rssAfter = process.memoryUsage().rss;
  const status = new Map(deliveries.map((d) => [d.taskId, d.status]));
  const attempts = await fx.db.webhookAttempt.findMany({ where: { taskId: { in: tasks.map((t) => t.id) } }, orderBy: { attemptNo: "asc" } });
  const of = (name: string) => tasks.filter((t) => t.behaviour === name).map((t) => ({ ...t, attempts: attempts.filter((a) => a.taskId === t.id) }));

  const summary: string[] = [];
  for (const b of behaviours) {
    const rows = of(b.name);
    const outcomes = rows.flatMap((r) => r.attempts.map((a) => a.outcome ?? "open"));
    const durations = rows.flatMap((r) => r.attempts.map((a) => a.durationMs ?? -1));
    summary.push(`${b.name.padEnd(13)} ${[...new Set(outcomes)].join(",").padEnd(32)} max ${Math.max(...durations)} ms, ${rows.filter((r) => status.get(r.id) === "delivered").length}/${rows.length} delivered`);
  }
  const goodLag = of("good").map((t) => t.attempts[0]!.finishedAt!.getTime() - t.finishedAt.getTime()).sort((a, b) => a - b);
  console.log(
    `hostile receivers: ${tasks.length} tasks\n${summary.join("\n")}\n` +
      `good receivers: delivery lag median ${goodLag[goodLag.length >> 1]} ms, max ${goodLag.at(-1)} ms; huge body: ${(counters.hugeWritten / 1e6).toFixed(1)} MB written by the receiver, ` +
      `worker RSS ${((rssAfter - rssBefore) / 1e6).toFixed(1)} MB more; redirect target hits ${counters.redirectTarget}; ${BLOCKED_IP} connects ${counters.blockedConnects}`,
  );

  const expectAll = (name: string, outcomes: string[], final: "delivered" | "failed", attemptCount: number) => {
    for (const t of of(name)) {
      expect(t.attempts.map((a) => a.outcome)).toEqual(outcomes.length === 1 ? Array(attemptCount).fill(outcomes[0]) : outcomes);
      expect(status.get(t.id)).toBe(final);
    }
  };
  expectAll("good", ["delivered"], "delivered", 1);
  expectAll("hang", ["timeout"], "failed", 3);
  expectAll("trickle", ["timeout"], "failed", 3);
  expectAll("huge", ["delivered"], "delivered", 1);
  expectAll("reset", ["connect_failed"], "failed", 3);
  for (const { status: code } of redirects) expectAll(`redirect ${code}`, [`http_${code}`], "failed", 3);
  for (const t of of("half blocked")) {
    expect(t.attempts.every((a) => a.outcome === "delivered" || a.outcome === "blocked_private_address")).toBe(true);
    expect(status.get(t.id)).toBe(t.attempts.at(-1)!.outcome === "delivered" ? "delivered" : "failed");
  }
  expect(of("half blocked").flatMap((t) => t.attempts).filter((a) => a.outcome === "blocked_private_address").length).toBeGreaterThan(0);

  // No attempt outlives its timeout (plus scheduling slack); nothing was read or followed.
  expect(Math.max(...attempts.map((a) => a.durationMs ?? Infinity))).toBeLessThan(TIMEOUT_MS + 1_000);
  expect(counters.redirectTarget).toBe(0);
  expect(counters.blockedConnects).toBe(0);
  expect(counters.hugeWritten).toBeLessThan(HUGE_BYTES / 4);
  // Loose (the test process hosts the receivers too); the byte count above is the sharp check.
  expect(rssAfter - rssBefore).toBeLessThan(150 * 1024 * 1024);
  // The good receivers were served while 30-odd bad attempts held connections.
  expect(goodLag.at(-1)!).toBeLessThan(TIMEOUT_MS);
}, 60_000);
