import { gzipSync } from "node:zlib";
import { createDownloadGuard, downloadFile, type DownloadError } from "../src/index.ts";
import { downloadFailure } from "./helpers/download-failure.ts";
import { startLoopbackServer, type LoopbackServer } from "./helpers/loopback-server.ts";

const LIMITS = { maxBytes: 64 * 1024, timeoutMs: 5_000 };
// The test servers sit on 127.0.0.1, which only this allow list opens (download-guard.test.ts covers the guard).
const GUARD = createDownloadGuard({ allowedCidrs: ["127.0.0.1"] });
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(2000, 9)]);

let server: LoopbackServer;
/** Per path: whether the client closed the connection before the response finished. */
let aborted: Map<string, boolean>;
let bytesSent: Map<string, number>;
let timers: NodeJS.Timeout[];

beforeAll(async () => {
  server = await startLoopbackServer((req, res) => {
    const path = req.url ?? "/";
    aborted.set(path, false);
    res.on("close", () => {
      if (!res.writableFinished) aborted.set(path, true);
    });
    const endless = (chunk: Buffer, everyMs: number) => {
      bytesSent.set(path, 0);
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write(chunk);
        bytesSent.set(path, (bytesSent.get(path) ?? 0) + chunk.length);
      }, everyMs);
      timers.push(timer);
    };
    switch (path) {
      case "/image.png":
        res.writeHead(200, { "content-type": "image/png", "content-length": PNG.length });
        res.end(PNG);
        return;
      case "/gzipped.json":
        res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-encoding": "gzip" });
        res.end(gzipSync(Buffer.from('{"ok":true}')));
        return;
      case "/no-type":
        res.writeHead(200);
        res.end("bytes");
        return;
      case "/missing":
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("not here");
        return;
      case "/broken":
        res.writeHead(502);
        res.end();
        return;
      case "/declared-huge":
        // Headers promise more than the limit; the body would never come.
        res.writeHead(200, { "content-type": "video/mp4", "content-length": String(10 * 1024 * 1024 * 1024) });
        res.write(Buffer.alloc(100));
        return;
      case "/chunked-endless":
        res.writeHead(200, { "content-type": "video/mp4" });
        endless(Buffer.alloc(16 * 1024, 1), 1);
        return;
      case "/gzip-bomb":
        // Small on the wire, far larger once decompressed: the limit counts decompressed bytes.
        res.writeHead(200, { "content-type": "image/png", "content-encoding": "gzip" });
        res.end(gzipSync(Buffer.alloc(LIMITS.maxBytes * 16)));
        return;
      case "/exact-limit":
        res.writeHead(200, { "content-type": "audio/wav" });
        res.end(Buffer.alloc(LIMITS.maxBytes, 3));
        return;
      case "/one-over":
        res.writeHead(200, { "content-type": "audio/wav" });
        res.end(Buffer.alloc(LIMITS.maxBytes + 1, 3));
        return;
      case "/no-answer":
        return;
      case "/trickle":
        res.writeHead(200, { "content-type": "audio/wav" });
        endless(Buffer.alloc(8, 1), 50);
        return;
      case "/truncated":
        res.writeHead(200, { "content-type": "image/png", "content-length": "1000" });
        res.write(Buffer.alloc(10));
        setTimeout(() => res.destroy(), 20);
        return;
    }
    const hops = /^\/hop\/(\d+)$/.exec(path);
    if (hops) {
      const left = Number(hops[1]);
      res.writeHead(302, { location: left === 0 ? "/image.png" : `/hop/${left - 1}` });
      res.end();
      return;
    }
    if (path === "/to-absolute") {
      res.writeHead(301, { location: `${server.url}/image.png` });
      res.end();
      return;
    }
    if (path === "/to-ftp") {
      res.writeHead(302, { location: "ftp://127.0.0.1/image.png" });
      res.end();
      return;
    }
    if (path === "/slow-hops") {
      // Each hop is quick for a per-request timer; together they pass the deadline.
      setTimeout(() => {
        res.writeHead(302, { location: "/slow-hops-2" });
        res.end();
      }, 250);
      return;
    }
    if (path === "/slow-hops-2") {
      setTimeout(() => {
        res.writeHead(302, { location: "/image.png" });
        res.end();
      }, 250);
      return;
    }
    res.writeHead(500);
    res.end();
  });
});

afterAll(async () => {
  GUARD.close();
  await server.close();
});

beforeEach(() => {
  aborted = new Map();
  bytesSent = new Map();
  timers = [];
});

afterEach(() => {
  for (const timer of timers) clearInterval(timer);
});

function failure(url: string, limits = LIMITS): Promise<DownloadError> {
  return downloadFailure(downloadFile(url, limits, GUARD));
}

async function waitFor(condition: () => boolean): Promise<void> {
  const until = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > until) throw new Error("condition not met within 5 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("downloadFile", () => {
  it("returns the body and the content type", async () => {
    const file = await downloadFile(`${server.url}/image.png`, LIMITS, GUARD);
    expect(file.data.equals(PNG)).toBe(true);
    expect(file.contentType).toBe("image/png");
  });

  it("decompresses and passes the content type through as sent", async () => {
    const file = await downloadFile(`${server.url}/gzipped.json`, LIMITS, GUARD);
    expect(file.data.toString()).toBe('{"ok":true}');
    expect(file.contentType).toBe("application/json; charset=utf-8");
  });

  it("reports a missing content type as undefined", async () => {
    const file = await downloadFile(`${server.url}/no-type`, LIMITS, GUARD);
    expect(file).toEqual({ data: Buffer.from("bytes"), contentType: undefined });
  });

  it("accepts a body of exactly maxBytes", async () => {
    expect((await downloadFile(`${server.url}/exact-limit`, LIMITS, GUARD)).data.length).toBe(LIMITS.maxBytes);
  });

  it("reports a 404 as http_404 and a 502 as http_502", async () => {
    const missing = await failure(`${server.url}/missing`);
    expect(missing.reason).toBe("http_404");
    expect(missing.message).toContain("404");
    expect((await failure(`${server.url}/broken`)).reason).toBe("http_502");
  });

  it("refuses a declared Content-Length over the limit at once", async () => {
    const started = Date.now();
    expect((await failure(`${server.url}/declared-huge`, { maxBytes: 1024, timeoutMs: 20_000 })).reason).toBe("too_large");
    expect(Date.now() - started).toBeLessThan(10_000);
    await waitFor(() => aborted.get("/declared-huge") === true);
  });

  it("stops a chunked body without a length as soon as it passes the limit", async () => {
    expect((await failure(`${server.url}/chunked-endless`, { maxBytes: 100_000, timeoutMs: 20_000 })).reason).toBe("too_large");
    await waitFor(() => aborted.get("/chunked-endless") === true);
    // The connection was dropped, so the server could not keep sending (socket buffers allow some slack).
    const sentAtAbort = bytesSent.get("/chunked-endless") ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(bytesSent.get("/chunked-endless")).toBe(sentAtAbort);
  });

  it("refuses a body one byte over the limit", async () => {
    expect((await failure(`${server.url}/one-over`)).reason).toBe("too_large");
  });

  it("counts decompressed bytes against the limit", async () => {
    expect((await failure(`${server.url}/gzip-bomb`)).reason).toBe("too_large");
  });

  it("times out a server that never answers", async () => {
    const error = await failure(`${server.url}/no-answer`, { maxBytes: 1024, timeoutMs: 300 });
    expect(error.reason).toBe("timeout");
    await waitFor(() => aborted.get("/no-answer") === true);
  });

  it("times out a body that keeps trickling in: the deadline covers the whole download", async () => {
    expect((await failure(`${server.url}/trickle`, { maxBytes: 1024 * 1024, timeoutMs: 400 })).reason).toBe("timeout");
    await waitFor(() => aborted.get("/trickle") === true);
  });

  it("times out redirects that together take longer than the deadline", async () => {
    expect((await failure(`${server.url}/slow-hops`, { maxBytes: 1024 * 1024, timeoutMs: 400 })).reason).toBe("timeout");
  });

  it("follows up to 3 redirects, relative or absolute", async () => {
    expect((await downloadFile(`${server.url}/hop/2`, LIMITS, GUARD)).data.equals(PNG)).toBe(true);
    expect((await downloadFile(`${server.url}/to-absolute`, LIMITS, GUARD)).contentType).toBe("image/png");
  });

  it("refuses a fourth redirect", async () => {
    expect((await failure(`${server.url}/hop/3`)).reason).toBe("too_many_redirects");
  });

  it("does not follow a redirect to another protocol", async () => {
    expect((await failure(`${server.url}/to-ftp`)).reason).toBe("http_302");
  });

  it("reports a refused connection and a cut body as network", async () => {
    const closed = await startLoopbackServer(() => {});
    const url = closed.url;
    await closed.close();
    expect((await failure(`${url}/image.png`)).reason).toBe("network");
    expect((await failure(`${server.url}/truncated`)).reason).toBe("network");
  });

  it.each(["file:///etc/passwd", "ftp://127.0.0.1/x.png", "not a url", "/relative/path.png", "data:image/png;base64,AAAA"])(
    "refuses %s without a request",
    async (url) => {
      expect((await failure(url)).reason).toBe("invalid_url");
    },
  );

  it("keeps the query string out of the error message", async () => {
    const error = await failure(`${server.url}/missing?X-Amz-Signature=topsecret`);
    expect(error.message).not.toContain("topsecret");
  });
});
