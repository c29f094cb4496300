import type { ServerResponse } from "node:http";
import { resolverFor } from "./helpers/fake-resolver.ts";
import { answerWith, startReceiver, type Handler } from "./helpers/receiver.ts";
import { createTracker, HOST } from "./helpers/senders.ts";
import { createTestCa, issueServerCert, type KeyPair } from "./helpers/test-pki.ts";

let ca: KeyPair;
let cert: KeyPair;
const track = createTracker();

beforeAll(async () => {
  ca = await createTestCa("Webhook Test CA");
  cert = await issueServerCert([HOST], { ca });
});
afterEach(() => track.closeAll());

function sender() {
  const lookup = resolverFor(HOST, ["127.0.0.1"]);
  return { lookup, sender: track.sender({ timeoutMs: 5_000, allowedCidrs: ["127.0.0.1/32"], lookup, ca: ca.cert }) };
}

/** Writes `chunk` for as long as the peer keeps reading, then again every `everyMs`, until closed. */
function streamForever(status: number, chunk: Buffer, everyMs: number, headers: Record<string, string> = {}): Handler & { written: () => number } {
  let written = 0;
  const handler: Handler = (_request, response: ServerResponse) => {
    response.writeHead(status, headers);
    const timer = setInterval(() => {
      while (!response.destroyed && response.write(chunk)) written += chunk.length;
    }, everyMs);
    response.on("close", () => clearInterval(timer));
  };
  return Object.assign(handler, { written: () => written });
}

describe("the response body", () => {
  it("is not waited for when it never ends: send returns at the status and the socket is closed", async () => {
    const handler = streamForever(200, Buffer.alloc(64 * 1024, "x"), 1);
    const receiver = track.receiver(await startReceiver({ tls: cert, handler }));
    const started = Date.now();

    await expect(sender().sender.send(`https://${HOST}:${receiver.port}/`, "{}")).resolves.toEqual({ ok: true, status: 200 });
    expect(Date.now() - started).toBeLessThan(2_000);
    await receiver.waitForClosedConnections(1);
    expect(receiver.closedConnections()).toBe(1);
  });

  it("is cut off at once when its declared length is large", async () => {
    const handler = streamForever(500, Buffer.alloc(1024, "x"), 50, { "content-length": String(1024 ** 3) });
    const receiver = track.receiver(await startReceiver({ tls: cert, handler }));

    await expect(sender().sender.send(`https://${HOST}:${receiver.port}/`, "{}")).resolves.toEqual({ ok: false, lastError: "http_500", status: 500 });
    await receiver.waitForClosedConnections(1);
  });

  it("is cut off when it trickles in too slowly, without delaying the outcome", async () => {
    const handler = streamForever(200, Buffer.from("x"), 50);
    const receiver = track.receiver(await startReceiver({ tls: cert, handler }));
    const started = Date.now();

    await expect(sender().sender.send(`https://${HOST}:${receiver.port}/`, "{}")).resolves.toEqual({ ok: true, status: 200 });
    expect(Date.now() - started).toBeLessThan(1_000);
    await receiver.waitForClosedConnections(1);
  });

  it("when small, runs out so the keep-alive connection is reused (and not resolved again)", async () => {
    const receiver = track.receiver(await startReceiver({ tls: cert, handler: answerWith(200, { "content-type": "application/json" }, '{"received":true}') }));
    const { lookup, sender: webhookSender } = sender();

    for (let i = 0; i < 5; i += 1) {
      await expect(webhookSender.send(`https://${HOST}:${receiver.port}/`, `{"n":${i}}`)).resolves.toEqual({ ok: true, status: 200 });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(receiver.requests).toHaveLength(5);
    expect(receiver.connections()).toBe(1);
    expect(lookup.calls).toHaveLength(1);
  });
});

/** Never answers a request for `path`; answers every other one with `answer`. */
function hangingOn(path: string, answer: Handler): Handler {
  return (request, response, body) => {
    if (request.url !== path) answer(request, response, body);
  };
}

describe("open requests", () => {
  it("are forgotten once their body has run out, so a long-lived sender keeps none of its finished attempts", async () => {
    const receiver = track.receiver(
      await startReceiver({ tls: cert, handler: hangingOn("/hang", answerWith(200, { "content-type": "application/json" }, '{"received":true}')) }),
    );
    const { sender: webhookSender } = sender();
    for (let i = 0; i < 20; i += 1)
      await expect(webhookSender.send(`https://${HOST}:${receiver.port}/`, `{"n":${i}}`)).resolves.toEqual({ ok: true, status: 200 });
    const hanging = webhookSender.send(`https://${HOST}:${receiver.port}/hang`, "{}");
    while (receiver.requests.length < 21) await new Promise((resolve) => setTimeout(resolve, 10));
    // Each body runs out just after its status settled the send.
    for (let waited = 0; webhookSender.openRequests() > 1 && waited < 2_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));

    expect(webhookSender.openRequests()).toBe(1);
    webhookSender.close();
    await expect(hanging).resolves.toMatchObject({ ok: false, lastError: "request_failed" });
    expect(webhookSender.openRequests()).toBe(0);
  });
});

describe("close()", () => {
  it("closes pooled connections and in-flight attempts; later sends fail without connecting", async () => {
    const receiver = track.receiver(await startReceiver({ tls: cert, handler: hangingOn("/hang", answerWith(200)) }));
    const { sender: webhookSender } = sender();
    await expect(webhookSender.send(`https://${HOST}:${receiver.port}/`, "{}")).resolves.toEqual({ ok: true, status: 200 });
    const hanging = webhookSender.send(`https://${HOST}:${receiver.port}/hang`, "{}");
    while (receiver.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));

    webhookSender.close();

    await expect(hanging).resolves.toMatchObject({ ok: false, lastError: "request_failed", status: null });
    await receiver.waitForClosedConnections(receiver.connections());
    await expect(webhookSender.send(`https://${HOST}:${receiver.port}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "request_failed" });
    expect(receiver.requests).toHaveLength(2);
  });
});
