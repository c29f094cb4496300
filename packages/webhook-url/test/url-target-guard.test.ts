import type { LookupAddress, LookupAllOptions } from "node:dns";
import { createUrlTargetGuard, type AddressLookup } from "@gen/webhook-url";
import { fakeResolver } from "../../webhook-sender/test/helpers/fake-resolver.ts";

// Nothing here opens a socket: literal hosts are refused from the string, and every name goes to
// an injected resolver that maps test names to loopback addresses (anything else: ENOTFOUND).
const NAMES: Record<string, string[]> = {
  "loop.test": ["127.0.0.7"],
  "media.test": ["127.0.0.5"],
  "both.test": ["127.0.0.5", "127.0.0.7"],
  "mapped.test": ["::ffff:127.0.0.7"],
  "metadata.test": ["169.254.169.254"],
};
const resolver = () => fakeResolver((hostname) => NAMES[hostname] ?? { code: "ENOTFOUND" });
// 127.0.0.5 stands for an operator's on-premises media host: loopback, but allowlisted.
const ALLOWED = ["127.0.0.5/32"];

const guard = (lookup: AddressLookup = resolver(), allowedCidrs = ALLOWED, resolveTimeoutMs?: number) =>
  createUrlTargetGuard({ allowedCidrs, lookup, ...(resolveTimeoutMs === undefined ? {} : { resolveTimeoutMs }) });
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

  test("a resolver that never answers is given up after the time-out, and the name let through", async () => {
    const silent: AddressLookup = (_hostname: string, _options: LookupAllOptions, _callback: (error: null, addresses: LookupAddress[]) => void) => {};
    const started = Date.now();
    await expect(guard(silent, ALLOWED, 200).refusal(one("https://slow.test/a.png"))).resolves.toBeNull();
    console.log(`a silent resolver was given up after ${Date.now() - started} ms (time-out 200 ms)`);
  });

  test("each name is resolved once per check, and the field that named it first is blamed", async () => {
    const lookup = resolver();
    const refusal = await guard(lookup).refusal([
      { field: "image_url", url: "https://media.test/a.png" },
      { field: "refs[0]", url: "https://loop.test/1.png" },
      { field: "refs[1]", url: "https://loop.test/2.png" },
    ]);
    expect(refusal).toMatch(/^Invalid value for refs\[0\]: .*loop\.test resolves to 127\.0\.0\.7/);
    expect(lookup.calls.map((call) => call.hostname).sort()).toEqual(["loop.test", "media.test"]);
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
