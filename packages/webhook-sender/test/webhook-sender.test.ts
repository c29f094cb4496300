import { once } from "node:events";
import net from "node:net";
import tls from "node:tls";
import { createWebhookSender } from "../src/index.ts";
import { fakeResolver, resolverFor } from "./helpers/fake-resolver.ts";
import { answerWith, closedPort, startReceiver } from "./helpers/receiver.ts";
import { createTracker, headerNames, HOST } from "./helpers/senders.ts";
import { createTestCa, issueServerCert, type KeyPair } from "./helpers/test-pki.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
let ca: KeyPair;
let goodCert: KeyPair;
const track = createTracker();

beforeAll(async () => {
  ca = await createTestCa("Webhook Test CA");
  goodCert = await issueServerCert([HOST], { ca });
});
afterEach(() => track.closeAll());

function loopbackSender(timeoutMs = 5_000) {
  return track.sender({ timeoutMs, allowedCidrs: ["127.0.0.1/32"], lookup: resolverFor(HOST, ["127.0.0.1"]), ca: ca.cert });
}

describe("a delivered attempt", () => {
  it("POSTs the body bytes to the path and query exactly as given, with exactly our headers", async () => {
    const receiver = track.receiver(await startReceiver({ tls: goodCert }));
    const body = JSON.stringify({ id: "task_0123", status: "completed", output: { text: "é ü 🚀 \u2028" }, error: null });
    const rawTarget = "/hooks/a%2Fb/./x/../{y}/%zz?a=1&a=2&sig=%2B%2f&empty=&q=[1]|{2}";

    const outcome = await loopbackSender().send(`https://${HOST}:${receiver.port}${rawTarget}#fragment-is-not-sent`, body);

    expect(outcome).toEqual({ ok: true, status: 200 });
    expect(receiver.requests).toHaveLength(1);
    const request = receiver.requests[0]!;
    expect(request.method).toBe("POST");
    expect(request.url).toBe(rawTarget);
    expect(request.body.equals(Buffer.from(body, "utf8"))).toBe(true);
    expect(request.rawHeaders).toEqual([
      "Content-Type",
      "application/json",
      "User-Agent",
      "service-Webhook/1",
      "Content-Length",
      String(Buffer.byteLength(body)),
      "Host",
      `${HOST}:${receiver.port}`,
      "Connection",
      "keep-alive",
    ]);
    // Nothing got would add on its own (accept-encoding, accept, authorization, cookie).
    expect(
      headerNames(request.rawHeaders)
        .map((name) => name.toLowerCase())
        .sort(),
    ).toEqual(["connection", "content-length", "content-type", "host", "user-agent"]);
  });

  it("resolves only the URL's host, with all: true", async () => {
    const receiver = track.receiver(await startReceiver({ tls: goodCert }));
    const lookup = resolverFor(HOST, ["127.0.0.1"]);
    const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: ["127.0.0.1/32"], lookup, ca: ca.cert });

    await expect(sender.send(`https://${HOST}:${receiver.port}/?next=https://other.test.example/`, "{}")).resolves.toEqual({ ok: true, status: 200 });
    expect(lookup.calls.map((call) => call.hostname)).toEqual([HOST]);
    expect(lookup.calls[0]?.options.all).toBe(true);
  });

  it.each([201, 202, 204, 299])("counts %i as delivered", async (status) => {
    const receiver = track.receiver(await startReceiver({ tls: goodCert, handler: answerWith(status) }));
    await expect(loopbackSender().send(`https://${HOST}:${receiver.port}/`, "{}")).resolves.toEqual({ ok: true, status });
  });
});

describe("an answered but failed attempt", () => {
  it.each([500, 404, 400, 429, 503])("reports %i as http_<status>", async (status) => {
    const receiver = track.receiver(await startReceiver({ tls: goodCert, handler: answerWith(status, {}, "nope") }));
    await expect(loopbackSender().send(`https://${HOST}:${receiver.port}/`, "{}")).resolves.toEqual({ ok: false, lastError: `http_${status}`, status });
  });

  it.each([301, 302, 303, 307, 308])("reports a %i as http_<status> without following it", async (status) => {
    const receiver = track.receiver(
      await startReceiver({
        tls: goodCert,
        handler: (request, response) => {
          if (request.url === "/target") return answerWith(200)(request, response, Buffer.alloc(0));
          answerWith(status, { location: "/target" })(request, response, Buffer.alloc(0));
        },
      }),
    );

    const outcome = await loopbackSender().send(`https://${HOST}:${receiver.port}/start`, "{}");

    expect(outcome).toEqual({ ok: false, lastError: `http_${status}`, status });
    // Give a (wrongly) followed redirect time to arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.requests.map((request) => request.url)).toEqual(["/start"]);
  });
});

describe("an attempt that gets no answer", () => {
  it("times out when the receiver never answers", async () => {
    const receiver = track.receiver(await startReceiver({ tls: goodCert, handler: () => undefined }));
    const started = Date.now();

    const outcome = await loopbackSender(300).send(`https://${HOST}:${receiver.port}/`, "{}");

    expect(outcome).toMatchObject({ ok: false, lastError: "timeout", status: null });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(receiver.requests).toHaveLength(1);
  });

  it("times out when the resolver never answers", async () => {
    const sender = track.sender({ timeoutMs: 300, allowedCidrs: ["127.0.0.1/32"], lookup: () => undefined, ca: ca.cert });
    await expect(sender.send(`https://${HOST}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "timeout", status: null });
  });

  it("reports a closed port as connect_failed", async () => {
    const port = await closedPort();
    await expect(loopbackSender().send(`https://${HOST}:${port}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "connect_failed", status: null });
  });

  it("reports a connection the receiver drops before answering as connect_failed", async () => {
    const receiver = track.receiver(await startReceiver({ tls: goodCert, handler: (request) => request.socket.destroy() }));
    const outcome = await loopbackSender().send(`https://${HOST}:${receiver.port}/`, "{}");
    expect(outcome).toMatchObject({ ok: false, lastError: "connect_failed", status: null });
    expect(receiver.requests).toHaveLength(1);
  });

  it.each(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL"])("reports a resolver %s as dns_failed", async (code) => {
    const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: ["127.0.0.1/32"], lookup: fakeResolver(() => ({ code })), ca: ca.cert });
    await expect(sender.send(`https://${HOST}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "dns_failed", status: null });
  });

  it("reports an empty resolver answer as dns_failed", async () => {
    const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: ["127.0.0.1/32"], lookup: fakeResolver(() => []), ca: ca.cert });
    await expect(sender.send(`https://${HOST}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "dns_failed", status: null });
  });

  it("reports a response that is not HTTP as request_failed", async () => {
    const server = tls.createServer({ key: goodCert.key, cert: goodCert.cert }, (socket) => socket.end("SMTP ready\r\n\r\n"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const { port } = server.address() as net.AddressInfo;
      await expect(loopbackSender().send(`https://${HOST}:${port}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "request_failed", status: null });
    } finally {
      server.close();
    }
  });

  it("reports a URL it cannot send as request_failed without resolving anything", async () => {
    const lookup = resolverFor(HOST, ["127.0.0.1"]);
    const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: ["127.0.0.1/32"], lookup, ca: ca.cert });
    for (const url of ["http://hooks.test.example/", "https://user:pw@hooks.test.example/", "nonsense"]) {
      await expect(sender.send(url, "{}")).resolves.toMatchObject({ ok: false, lastError: "request_failed", status: null });
    }
    expect(lookup.calls).toHaveLength(0);
  });
});

describe("TLS", () => {
  it.each([
    ["signed by another CA", async () => issueServerCert([HOST], { ca: await createTestCa("Someone Else's CA") })],
    ["for another host name", () => issueServerCert(["other.test.example"], { ca })],
    ["self-signed", () => issueServerCert([HOST])],
    ["expired", () => issueServerCert([HOST], { ca, notBeforeDate: new Date(Date.now() - 10 * DAY_MS), notAfterDate: new Date(Date.now() - DAY_MS) })],
  ])("reports a certificate %s as tls_error and sends nothing", async (_label, makeCert) => {
    const receiver = track.receiver(await startReceiver({ tls: await makeCert() }));
    await expect(loopbackSender().send(`https://${HOST}:${receiver.port}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "tls_error", status: null });
    expect(receiver.requests).toHaveLength(0);
  });

  it("checks every new connection of one sender on its own (its connections share one TLS context)", async () => {
    const sender = loopbackSender();
    const good = track.receiver(await startReceiver({ tls: goodCert }));
    const wrongName = track.receiver(await startReceiver({ tls: await issueServerCert(["other.test.example"], { ca }) }));
    await expect(sender.send(`https://${HOST}:${good.port}/`, "{}")).resolves.toMatchObject({ ok: true, status: 200 });
    await expect(sender.send(`https://${HOST}:${wrongName.port}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "tls_error" });
    await expect(sender.send(`https://${HOST}:${good.port}/`, "{}")).resolves.toMatchObject({ ok: true, status: 200 });
    expect(wrongName.requests).toHaveLength(0);
  });

  it("trusts the system store, not the test CA, when no ca is given", async () => {
    const receiver = track.receiver(await startReceiver({ tls: goodCert }));
    const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: ["127.0.0.1/32"], lookup: resolverFor(HOST, ["127.0.0.1"]) });
    await expect(sender.send(`https://${HOST}:${receiver.port}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "tls_error" });
  });

  it("reports a plain-HTTP endpoint as tls_error", async () => {
    const server = net.createServer((socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const { port } = server.address() as net.AddressInfo;
      await expect(loopbackSender().send(`https://${HOST}:${port}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "tls_error", status: null });
    } finally {
      server.close();
    }
  });
});

describe("createWebhookSender", () => {
  it("refuses a malformed allow list or timeout up front", () => {
    expect(() => createWebhookSender({ timeoutMs: 1_000, allowedCidrs: ["10.1/16"] })).toThrow(/10\.1\/16/);
    expect(() => createWebhookSender({ timeoutMs: 0, allowedCidrs: [] })).toThrow(RangeError);
  });
});
