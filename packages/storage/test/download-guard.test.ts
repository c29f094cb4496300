import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fakeResolver } from "../../webhook-sender/test/helpers/fake-resolver.ts";
import { createTestCa, issueServerCert } from "../../webhook-sender/test/helpers/test-pki.ts";
import { createDownloadGuard, downloadFile, type DownloadError, type DownloadGuard } from "../src/index.ts";
import { downloadFailure } from "./helpers/download-failure.ts";
import { startLoopbackServer, type LoopbackServer } from "./helpers/loopback-server.ts";

// Only loopback is used: 127.0.0.1 is the "upstream" range the guard opens, 127.0.0.2 stands for
// an address it must not reach (a metadata service, say). Names reach them through an injected
// resolver. The 127.0.0.2 server counts connections, to show a refusal never connects.
const LIMITS = { maxBytes: 64 * 1024, timeoutMs: 5_000 };
const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(100, 7)]);

let allowed: LoopbackServer;
let forbidden: LoopbackServer;
let forbiddenConnections = 0;
let tls: HttpsServer;
let tlsPort = 0;
let guard: DownloadGuard;

const resolver = fakeResolver((hostname) => {
  if (hostname === "files.test") return ["127.0.0.1"];
  if (hostname === "meta.test") return ["127.0.0.2"];
  if (hostname === "mixed.test") return ["127.0.0.1", "127.0.0.2"];
  return { code: "ENOTFOUND" };
});

function routes(req: IncomingMessage, res: ServerResponse): void {
  const redirect = (location: string) => {
    res.writeHead(302, { location });
    res.end();
  };
  const forbiddenPort = new URL(forbidden.url).port;
  switch (req.url) {
    case "/image.png":
      res.writeHead(200, { "content-type": "image/png" });
      res.end(PNG);
      return;
    case "/to-meta-name":
      return redirect(`http://meta.test:${forbiddenPort}/secret`);
    case "/to-meta-literal":
      return redirect(`http://127.0.0.2:${forbiddenPort}/secret`);
    case "/to-meta-mapped":
      return redirect(`http://[::ffff:127.0.0.2]:${forbiddenPort}/secret`);
    case "/to-mixed":
      return redirect(`http://mixed.test:${forbiddenPort}/secret`);
    case "/to-files-name":
      return redirect(`http://files.test:${new URL(allowed.url).port}/image.png`);
    case "/to-https-meta":
      return redirect(`https://meta.test:${tlsPort}/image.png`);
    case "/hop-then-meta":
      return redirect("/to-meta-name");
  }
  res.writeHead(404);
  res.end();
}

beforeAll(async () => {
  allowed = await startLoopbackServer(routes);
  forbidden = await startLoopbackServerOn("127.0.0.2", (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("instance credentials");
  });
  forbidden.server.on("connection", () => forbiddenConnections++);
  const ca = await createTestCa("download-guard test CA");
  const leaf = await issueServerCert(["files.test", "meta.test"], { ca });
  tls = createHttpsServer({ key: leaf.key, cert: leaf.cert }, routes);
  await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
  tlsPort = (tls.address() as AddressInfo).port;
  guard = createDownloadGuard({ allowedCidrs: ["127.0.0.1/32"], lookup: resolver, ca: ca.cert });
});

afterAll(async () => {
  guard.close();
  tls.closeAllConnections();
  await Promise.all([allowed.close(), forbidden.close(), new Promise((resolve) => tls.close(resolve))]);
});

beforeEach(() => {
  forbiddenConnections = 0;
});

async function startLoopbackServerOn(host: string, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<LoopbackServer> {
  const server = await startLoopbackServer(handler);
  // Re-listen on the requested loopback address (the helper always picks 127.0.0.1).
  await new Promise<void>((resolve) => server.server.close(() => resolve()));
  await new Promise<void>((resolve) => server.server.listen(0, host, resolve));
  const { port } = server.server.address() as AddressInfo;
  return { ...server, url: `http://${host}:${port}` };
}

function refusal(url: string, withGuard = guard): Promise<DownloadError> {
  return downloadFailure(downloadFile(url, LIMITS, withGuard));
}

const port = (server: LoopbackServer) => new URL(server.url).port;

describe("upstream downloads go through the address guard", () => {
  it("an allowed range works, by name and by literal, also after a redirect", async () => {
    expect((await downloadFile(`http://files.test:${port(allowed)}/image.png`, LIMITS, guard)).data.equals(PNG)).toBe(true);
    expect((await downloadFile(`${allowed.url}/image.png`, LIMITS, guard)).data.equals(PNG)).toBe(true);
    expect((await downloadFile(`${allowed.url}/to-files-name`, LIMITS, guard)).data.equals(PNG)).toBe(true);
  });

  it("a name resolving to a blocked address is refused without connecting", async () => {
    const error = await refusal(`http://meta.test:${port(forbidden)}/secret`);
    expect(error.reason).toBe("blocked_address");
    expect(error.message).toContain("127.0.0.2");
    expect(forbiddenConnections).toBe(0);
  });

  it("one blocked record among allowed ones refuses the whole answer", async () => {
    expect((await refusal(`http://mixed.test:${port(forbidden)}/secret`)).reason).toBe("blocked_address");
    expect((await refusal(`${allowed.url}/to-mixed`)).reason).toBe("blocked_address");
    expect(forbiddenConnections).toBe(0);
  });

  it("an IP literal outside the allowed ranges is refused without connecting", async () => {
    expect((await refusal(`${forbidden.url}/secret`)).reason).toBe("blocked_address");
    expect((await refusal(`http://[::ffff:127.0.0.2]:${port(forbidden)}/secret`)).reason).toBe("blocked_address");
    expect(forbiddenConnections).toBe(0);
  });

  it.each(["/to-meta-name", "/to-meta-literal", "/to-meta-mapped", "/hop-then-meta"])(
    "a redirect (%s) to a blocked address is refused without connecting",
    async (path) => {
      const error = await refusal(`${allowed.url}${path}`);
      expect(error.reason).toBe("blocked_address");
      expect(forbiddenConnections).toBe(0);
    },
  );

  it("https hops are guarded too", async () => {
    expect((await downloadFile(`https://files.test:${tlsPort}/image.png`, LIMITS, guard)).data.equals(PNG)).toBe(true);
    expect((await refusal(`https://files.test:${tlsPort}/to-meta-name`)).reason).toBe("blocked_address");
    // The TLS server listens on 127.0.0.1 only, so reaching it as meta.test proves the check ran first.
    expect((await refusal(`https://files.test:${tlsPort}/to-https-meta`)).reason).toBe("blocked_address");
    expect((await refusal(`https://meta.test:${tlsPort}/image.png`)).reason).toBe("blocked_address");
    expect(forbiddenConnections).toBe(0);
  });

  it("opening the range in the allow list lets the same address through", async () => {
    const wide = createDownloadGuard({ allowedCidrs: ["127.0.0.0/29"], lookup: resolver });
    try {
      const file = await downloadFile(`${allowed.url}/to-meta-name`, LIMITS, wide);
      expect(file.data.toString()).toBe("instance credentials");
      expect(forbiddenConnections).toBe(1);
    } finally {
      wide.close();
    }
  });

  it("with no allow list even the upstream's own loopback address is refused", async () => {
    const closed = createDownloadGuard({ allowedCidrs: [], lookup: resolver });
    try {
      expect((await refusal(`${allowed.url}/image.png`, closed)).reason).toBe("blocked_address");
      expect((await refusal(`http://files.test:${port(allowed)}/image.png`, closed)).reason).toBe("blocked_address");
    } finally {
      closed.close();
    }
  });
});
