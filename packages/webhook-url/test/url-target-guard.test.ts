import { pbkdf2 } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { promises as dns } from "node:dns";
import { promises as fs } from "node:fs";
import { createNameResolver, createUrlTargetGuard, type NameResolver } from "@gen/webhook-url";
import { fakeNameResolver } from "./helpers/fake-name-resolver.ts";

// Nothing here opens a socket: literal hosts are refused from the string, and every name goes to
// an injected resolver that maps test names to loopback addresses (anything else: ENOTFOUND).
const NAMES: Record<string, string[]> = {
  "loop.test": ["127.0.0.7"],
  "media.test": ["127.0.0.5"],
  "both.test": ["127.0.0.5", "127.0.0.7"],
  "mapped.test": ["::ffff:127.0.0.7"],
  "metadata.test": ["169.254.169.254"],
};
const resolver = () => fakeNameResolver((hostname) => NAMES[hostname] ?? { code: "ENOTFOUND" });
// 127.0.0.5 stands for an operator's on-premises media host: loopback, but allowlisted.
const ALLOWED = ["127.0.0.5/32"];

const guard = (names: NameResolver = resolver(), allowedCidrs = ALLOWED, resolveTimeoutMs?: number) =>
  createUrlTargetGuard({ allowedCidrs, resolver: names, ...(resolveTimeoutMs === undefined ? {} : { resolveTimeoutMs }) });
const one = (url: string, field = "image_url") => [{ field, url }];

describe("literal hosts, in any notation the URL parser reads as an address", () => {
  test.each([
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.170.2/v2/credentials",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://127.0.0.1:8090/files/x.png",
    "https://127.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://0x7f.0.0.0x1/",
    "http://%31%32%37.0.0.1/",
    "http://１２７.０.０.１/",
    "http://127.0.0.1./",
    "http://0/",
    "http://[::1]/",
    "http://[::]/",
    "http://[fe80::1]/",
    "http://[fc00::1]/",
    "http://10.0.0.1/a.png",
    "http://172.16.0.1/a.png",
    "http://192.168.1.1/a.png",
    "http://100.64.0.1/a.png",
    "http://224.0.0.1/a.png",
    "http://255.255.255.255/a.png",
    "http://[64:ff9b::a00:1]/",
    "http://[2002:7f00:1::]/",
    "http://user:pass@127.0.0.1/",
    "http://localhost:8090/x.png",
    "http://files.localhost/x.png",
  ])("%s is refused without resolving anything", async (url) => {
    const lookup = resolver();
    const refusal = await guard(lookup).refusal(one(url));
    expect(refusal).toMatch(/^Invalid value for image_url: must not point at a private, loopback, link-local or metadata address \(.+: .+\)$/);
    expect(lookup.calls).toEqual([]);
  });

  test("an allowlisted literal is accepted; cloud metadata never is, not even for 0.0.0.0/0", async () => {
    await expect(guard(resolver(), ["127.0.0.5"]).refusal(one("http://127.0.0.5:9000/ref.png"))).resolves.toBeNull();
    await expect(guard(resolver(), ["0.0.0.0/0", "::/0"]).refusal(one("http://169.254.169.254/"))).resolves.toMatch(/cloudMetadata/);
    await expect(guard(resolver(), ["0.0.0.0/0", "::/0"]).refusal(one("http://[::ffff:169.254.169.254]/"))).resolves.toMatch(/cloudMetadata/);
  });

  test.each(["ftp://files.example/a.png", "file:///etc/passwd", "gopher://loop.test/", "javascript:alert(1)", "data:image/png;base64,AAAA"])(
    "%s is not an http(s) URL",
    async (url) => {
      await expect(guard().refusal(one(url, "refs[0]"))).resolves.toBe("Invalid value for refs[0]: must be an http(s) URL");
    },
  );
});

describe("names, by what they resolve to now", () => {
  test("a name resolving to loopback is refused, naming the field, the address and its range", async () => {
    await expect(guard().refusal(one("https://loop.test/a.png"))).resolves.toBe(
      "Invalid value for image_url: must not point at a private, loopback, link-local or metadata address (loop.test resolves to 127.0.0.7: loopback)",
    );
    await expect(guard().refusal(one("https://mapped.test/a.png"))).resolves.toMatch(/mapped\.test resolves to ::ffff:127\.0\.0\.7: ipv4Mapped:loopback/);
    await expect(guard(resolver(), ["0.0.0.0/0"]).refusal(one("https://metadata.test/"))).resolves.toMatch(/cloudMetadata/);
  });

  test("a name resolving only to allowlisted addresses is accepted; one blocked record among them refuses it", async () => {
    await expect(guard().refusal(one("https://media.test/a.png"))).resolves.toBeNull();
    await expect(guard().refusal(one("https://both.test/a.png"))).resolves.toMatch(/both\.test resolves to 127\.0\.0\.7: loopback/);
  });

  test("a name that does not resolve is let through (the upstream will fail it)", async () => {
    await expect(guard().refusal(one("https://nowhere.test/a.png"))).resolves.toBeNull();
  });

  test("a name whose answer is not known in time is refused: a slow name server passes nothing", async () => {
    const silent: NameResolver = { resolve4: () => new Promise(() => {}), resolve6: () => new Promise(() => {}) };
    const started = Date.now();
    await expect(guard(silent, ALLOWED, 200).refusal(one("https://slow.test/a.png"))).resolves.toBe(
      "Invalid value for image_url: slow.test could not be resolved to check its addresses (no answer within 200 ms)",
    );
    console.log(`a silent resolver was given up after ${Date.now() - started} ms (time-out 200 ms)`);
    const failing = fakeNameResolver(() => ({ code: "ESERVFAIL" }));
    await expect(guard(failing).refusal(one("https://broken.test/a.png"))).resolves.toMatch(/broken\.test could not be resolved .*\(ESERVFAIL\)$/);
  });

  test("a blocked record refuses the name without waiting for the other family", async () => {
    const names: NameResolver = { resolve4: async () => ["127.0.0.7"], resolve6: () => new Promise(() => {}) };
    await expect(guard(names, ALLOWED, 60_000).refusal(one("https://half.test/a.png"))).resolves.toMatch(/half\.test resolves to 127\.0\.0\.7: loopback/);
  });

  test("each name is resolved once per check, and the field that named it first is blamed", async () => {
    const lookup = resolver();
    const refusal = await guard(lookup).refusal([
      { field: "image_url", url: "https://media.test/a.png" },
      { field: "refs[0]", url: "https://loop.test/1.png" },
      { field: "refs[1]", url: "https://loop.test/2.png" },
    ]);
    expect(refusal).toMatch(/^Invalid value for refs\[0\]: .*loop\.test resolves to 127\.0\.0\.7/);
    expect([...lookup.calls].sort()).toEqual(["loop.test", "media.test"]);
  });

  test("more than 8 different names in one request are refused before any is resolved", async () => {
    const lookup = resolver();
    const urls = Array.from({ length: 9 }, (_, i) => ({ field: `refs[${i}]`, url: `https://n${i}.test/a.png` }));
    await expect(guard(lookup).refusal(urls)).resolves.toBe("Invalid request: URL parameters may name at most 8 different hosts");
    expect(lookup.calls).toEqual([]);
    await expect(guard(lookup).refusal(urls.slice(0, 8))).resolves.toBeNull();
  });
});

test("a malformed allowlist entry is refused when the guard is made (at start-up)", () => {
  expect(() => createUrlTargetGuard({ allowedCidrs: ["10.1/16"] })).toThrow(/invalid allowed CIDR/);
});

describe("the default resolver (c-ares) against a name server that never answers", () => {
  // A name server of the test's own on loopback that takes every query and answers none.
  let server: Socket;
  let queries = 0;
  beforeAll(async () => {
    server = createSocket("udp4").on("message", () => queries++);
    await new Promise<void>((resolve) => server.bind(0, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(resolve)));

  test("gives each query up after the time-out and holds none of libuv's threads meanwhile", async () => {
    const timeoutMs = 1500;
    const names = createNameResolver(timeoutMs) as dns.Resolver;
    expect(names).toBeInstanceOf(dns.Resolver);
    names.setServers([`127.0.0.1:${server.address().port}`]);
    const check = createUrlTargetGuard({ allowedCidrs: [], resolver: names, resolveTimeoutMs: timeoutMs });
    // Two requests of 8 hanging names each: 32 queries, four times libuv's pool.
    const started = performance.now();
    let checksSettled = 0;
    const checks = [0, 1].map((r) =>
      check.refusal(Array.from({ length: 8 }, (_, i) => ({ field: `refs[${i}]`, url: `https://hang-${r}-${i}.test/a.png` }))).finally(() => checksSettled++),
    );
    // Work that runs on libuv's threads: it would queue behind hanging getaddrinfo calls.
    const poolWork = Promise.all([
      ...Array.from({ length: 4 }, () => fs.readFile("package.json")),
      ...Array.from(
        { length: 4 },
        () => new Promise((resolve, reject) => pbkdf2("x", "salt", 1000, 32, "sha256", (error, key) => (error ? reject(error) : resolve(key)))),
      ),
    ]);
    await poolWork;
    const poolMs = performance.now() - started;
    const settledBeforePool = checksSettled;
    const answers = await Promise.all(checks);
    const checksMs = performance.now() - started;
    console.log(
      `16 hanging names (${queries} queries seen by the silent name server): 4 file reads and 4 pbkdf2 done after ${poolMs.toFixed(0)} ms, ` +
        `both checks refused after ${checksMs.toFixed(0)} ms (time-out ${timeoutMs} ms)`,
    );
    expect(settledBeforePool).toBe(0);
    for (const answer of answers) expect(answer).toMatch(/could not be resolved to check its addresses/);
    expect(queries).toBeGreaterThan(0);
  });
});
