import { fakeResolver, resolverFor } from "./helpers/fake-resolver.ts";
import { answerWith, startReceiver, startReceiverPair } from "./helpers/receiver.ts";
import { createTracker, HOST } from "./helpers/senders.ts";
import { createTestCa, issueServerCert, type KeyPair } from "./helpers/test-pki.ts";

// 127.0.0.2 plays a public address (allow-listed), 127.0.0.3 a private one (not allow-listed).
const GOOD = "127.0.0.2";
const BAD = "127.0.0.3";
const ALLOW_GOOD = [`${GOOD}/32`];

let ca: KeyPair;
let cert: KeyPair;
const track = createTracker();

beforeAll(async () => {
  ca = await createTestCa("Webhook Test CA");
  cert = await issueServerCert([HOST], { ca });
});
afterEach(() => track.closeAll());

const blocked = { ok: false, lastError: "blocked_private_address", status: null };

describe("the private-address guard", () => {
  it("refuses a name that resolves to loopback when nothing is allow-listed, before connecting", async () => {
    const receiver = track.receiver(await startReceiver({ tls: cert }));
    const lookup = resolverFor(HOST, ["127.0.0.1"]);
    const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: [], lookup, ca: ca.cert });

    await expect(sender.send(`https://${HOST}:${receiver.port}/`, "{}")).resolves.toMatchObject(blocked);
    expect(lookup.calls).toEqual([{ hostname: HOST, options: expect.objectContaining({ all: true }) }]);
    expect(receiver.connections()).toBe(0);
  });

  it.each([[[GOOD, BAD]], [[BAD, GOOD]], [[GOOD, `::ffff:${BAD}`]]])(
    "refuses the attempt when any record of %j is blocked, connecting to neither",
    async (answer) => {
      const [good, bad] = track.receiver(await startReceiverPair({ tls: cert, host: GOOD }, { tls: cert, host: BAD }));
      const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: ALLOW_GOOD, lookup: resolverFor(HOST, answer), ca: ca.cert });

      await expect(sender.send(`https://${HOST}:${good.port}/`, "{}")).resolves.toMatchObject(blocked);
      expect(good.connections()).toBe(0);
      expect(bad.connections()).toBe(0);
    },
  );

  it("delivers to an allow-listed address, connecting to exactly that address", async () => {
    const [good, bad] = track.receiver(await startReceiverPair({ tls: cert, host: GOOD }, { tls: cert, host: BAD }));
    const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: ALLOW_GOOD, lookup: resolverFor(HOST, [GOOD]), ca: ca.cert });

    await expect(sender.send(`https://${HOST}:${good.port}/`, "{}")).resolves.toEqual({ ok: true, status: 200 });
    expect(good.requests.map((request) => request.localAddress)).toEqual([GOOD]);
    expect(bad.connections()).toBe(0);
  });

  describe("DNS rebinding (first answer allowed, every other answer not)", () => {
    const rebinding = () => fakeResolver((_hostname, call) => (call % 2 === 1 ? [GOOD] : [BAD]));

    it("connects only to the checked address when every attempt needs a new connection", async () => {
      const [good, bad] = track.receiver(
        await startReceiverPair({ tls: cert, host: GOOD, handler: answerWith(200, { connection: "close" }) }, { tls: cert, host: BAD }),
      );
      const lookup = rebinding();
      const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: ALLOW_GOOD, lookup, ca: ca.cert });

      const outcomes = [];
      for (let i = 0; i < 6; i += 1) {
        outcomes.push(await sender.send(`https://${HOST}:${good.port}/hook?n=${i}`, "{}"));
        await good.waitForClosedConnections(good.connections());
      }

      // One resolution per connection: an allowed answer is used as is, a rebound one is refused.
      expect(lookup.calls).toHaveLength(6);
      expect(outcomes.map((outcome) => (outcome.ok ? "delivered" : outcome.lastError))).toEqual([
        "delivered",
        "blocked_private_address",
        "delivered",
        "blocked_private_address",
        "delivered",
        "blocked_private_address",
      ]);
      expect(good.requests.map((request) => [request.url, request.localAddress])).toEqual([
        ["/hook?n=0", GOOD],
        ["/hook?n=2", GOOD],
        ["/hook?n=4", GOOD],
      ]);
      expect(bad.connections()).toBe(0);
    });

    it("keeps using the checked connection while it is pooled", async () => {
      const [good, bad] = track.receiver(await startReceiverPair({ tls: cert, host: GOOD }, { tls: cert, host: BAD }));
      const lookup = rebinding();
      const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: ALLOW_GOOD, lookup, ca: ca.cert });

      for (let i = 0; i < 5; i += 1) {
        await expect(sender.send(`https://${HOST}:${good.port}/`, "{}")).resolves.toEqual({ ok: true, status: 200 });
        // Let the drained response hand the socket back to the pool.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(lookup.calls).toHaveLength(1);
      expect(good.connections()).toBe(1);
      expect(bad.connections()).toBe(0);
    });
  });

  describe("an IP-literal host (refused at submission; checked again here)", () => {
    it.each(["127.0.0.1", "[::1]", "2130706433", "0x7f.1"])("refuses %s without resolving or connecting", async (host) => {
      const receiver = track.receiver(await startReceiver({ tls: cert }));
      const lookup = resolverFor(HOST, ["127.0.0.1"]);
      const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: [], lookup, ca: ca.cert });

      await expect(sender.send(`https://${host}:${receiver.port}/`, "{}")).resolves.toMatchObject(blocked);
      expect(lookup.calls).toHaveLength(0);
      expect(receiver.connections()).toBe(0);
    });

    it("connects to an allow-listed literal directly, checking the certificate against the IP", async () => {
      const receiver = track.receiver(await startReceiver({ tls: cert }));
      const lookup = resolverFor(HOST, ["127.0.0.1"]);
      const sender = track.sender({ timeoutMs: 5_000, allowedCidrs: ["127.0.0.1/32"], lookup, ca: ca.cert });

      // The certificate names HOST, not 127.0.0.1.
      await expect(sender.send(`https://127.0.0.1:${receiver.port}/`, "{}")).resolves.toMatchObject({ ok: false, lastError: "tls_error" });
      expect(lookup.calls).toHaveLength(0);
      expect(receiver.connections()).toBe(1);
    });
  });
});
