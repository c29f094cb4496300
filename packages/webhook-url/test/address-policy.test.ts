import { createAddressPolicy } from "@gen/webhook-url";
import type { BlockReason } from "@gen/webhook-url";

// Every address below is only classified as a string; nothing is contacted.
const blocked: [address: string, reason: BlockReason][] = [
  // IPv4 special-purpose ranges.
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["10.0.0.1", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.254", "private"],
  ["192.168.1.1", "private"],
  ["100.64.0.1", "carrierGradeNat"],
  ["100.127.255.254", "carrierGradeNat"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.0.1", "linkLocal"],
  ["169.254.169.254", "cloudMetadata"],
  ["100.100.100.200", "cloudMetadata"],
  ["168.63.129.16", "cloudMetadata"],
  ["192.0.0.8", "reserved"],
  ["192.0.2.1", "reserved"],
  ["192.88.99.1", "reserved"],
  ["198.18.0.1", "reserved"],
  ["198.19.255.254", "reserved"],
  ["198.51.100.7", "reserved"],
  ["203.0.113.9", "reserved"],
  ["240.0.0.1", "reserved"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["255.255.255.255", "broadcast"],
  // IPv6 special-purpose ranges.
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["fe80::1", "linkLocal"],
  ["fe80::1%eth0", "linkLocal"],
  ["febf::1", "linkLocal"],
  ["fc00::1", "uniqueLocal"],
  ["fd12:3456:789a::1", "uniqueLocal"],
  ["fd00:ec2::254", "cloudMetadata"],
  ["fd20:ce::254", "cloudMetadata"],
  ["fec0::1", "siteLocal"],
  ["ff02::1", "multicast"],
  ["ff0e::1", "multicast"],
  ["100::1", "discard"],
  ["2001:db8::1", "reserved"],
  ["2001:db8:ffff::1", "reserved"],
  ["2001:2::1", "reserved"],
  ["3fff::1", "reserved"],
  ["5f00::1", "reserved"],
  ["4000::1", "reserved"],
  ["1234::1", "reserved"],
  // IPv4-mapped (::ffff:0:0/96), in dotted and hex spelling.
  ["::ffff:127.0.0.1", "ipv4Mapped:loopback"],
  ["::ffff:7f00:1", "ipv4Mapped:loopback"],
  ["::FFFF:7F00:1", "ipv4Mapped:loopback"],
  ["0:0:0:0:0:ffff:7f00:1", "ipv4Mapped:loopback"],
  ["::ffff:10.1.2.3", "ipv4Mapped:private"],
  ["::ffff:169.254.169.254", "ipv4Mapped:cloudMetadata"],
  ["::ffff:0.0.0.0", "ipv4Mapped:unspecified"],
  ["::ffff:100.64.0.1", "ipv4Mapped:carrierGradeNat"],
  ["::ffff:224.0.0.1", "ipv4Mapped:multicast"],
  ["::ffff:255.255.255.255", "ipv4Mapped:broadcast"],
  // IPv4-compatible (::/96, deprecated): always blocked.
  ["::127.0.0.1", "ipv4Compatible:loopback"],
  ["::7f00:1", "ipv4Compatible:loopback"],
  ["::a00:1", "ipv4Compatible:private"],
  ["::8.8.8.8", "ipv4Compatible"],
  // IPv4-translated (::ffff:0:0:0/96, SIIT, deprecated): always blocked.
  ["::ffff:0:7f00:1", "ipv4Translated:loopback"],
  ["::ffff:0:808:808", "ipv4Translated"],
  // NAT64 well-known prefix and local-use prefix.
  ["64:ff9b::127.0.0.1", "nat64:loopback"],
  ["64:ff9b::a9fe:a9fe", "nat64:cloudMetadata"],
  ["64:ff9b::c0a8:101", "nat64:private"],
  ["64:ff9b:1::1", "nat64Local"],
  ["64:ff9b:1:abcd::808:808", "nat64Local"],
  // 6to4: IPv4 in bits 16-48.
  ["2002:7f00:1::", "6to4:loopback"],
  ["2002:a00:1::1", "6to4:private"],
  ["2002:a9fe:a9fe::1", "6to4:cloudMetadata"],
  ["2002::1", "6to4:unspecified"],
  // Teredo: blocked whatever the client address.
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"],
  ["2001::80ff:fffe", "teredo"],
  // Not an IP literal at all, or not in canonical form.
  ["", "invalid"],
  ["localhost", "invalid"],
  ["example.com", "invalid"],
  ["127.1", "invalid"],
  ["2130706433", "invalid"],
  ["0x7f000001", "invalid"],
  ["0177.0.0.1", "invalid"],
  ["010.0.0.1", "invalid"],
  ["127.0.0.1 ", "invalid"],
  ["[::1]", "invalid"],
  ["::ffff:127.1", "invalid"],
  ["1::2::3", "invalid"],
  ["127.0.0.1/32", "invalid"],
  ["256.0.0.1", "invalid"],
];

const publicAddresses = [
  "1.1.1.1",
  "8.8.8.8",
  "93.184.216.34",
  "100.63.255.255",
  "100.128.0.1",
  "172.15.255.255",
  "172.32.0.1",
  "192.31.196.1",
  "192.52.193.1",
  "223.255.255.255",
  "2606:4700:4700::1111",
  "2a00:1450:4001:80b::200e",
  "2001:4860:4860::8888",
  "2001:3::1",
  "2001:4:112::1",
  "::ffff:8.8.8.8",
  "::ffff:808:808",
  "64:ff9b::8.8.8.8",
  "64:ff9b::808:808",
  "2002:808:808::1",
];

describe("createAddressPolicy([])", () => {
  const policy = createAddressPolicy([]);

  it("has wide tables", () => {
    expect(blocked.length + publicAddresses.length).toBeGreaterThanOrEqual(40);
  });

  it.each(blocked)("blocks %s as %s", (address, reason) => {
    expect(policy.check(address)).toBe(reason);
  });

  it.each(publicAddresses)("allows %s", (address) => {
    expect(policy.check(address)).toBeNull();
  });

  it("treats a non-string as invalid instead of throwing", () => {
    expect(policy.check(undefined as unknown as string)).toBe("invalid");
    expect(policy.check(2130706433 as unknown as string)).toBe("invalid");
  });
});

describe("createAddressPolicy allow list", () => {
  it("exempts IPv4 ranges, also when written IPv4-mapped, and nothing else", () => {
    const policy = createAddressPolicy(["127.0.0.0/8"]);
    expect(policy.check("127.0.0.1")).toBeNull();
    expect(policy.check("127.10.20.30")).toBeNull();
    expect(policy.check("::ffff:127.0.0.1")).toBeNull();
    expect(policy.check("::ffff:7f00:2")).toBeNull();
    expect(policy.check("10.0.0.1")).toBe("private");
    expect(policy.check("::1")).toBe("loopback");
    // Only the mapped form stands for the same IPv4 host; other embeddings stay blocked.
    expect(policy.check("::127.0.0.1")).toBe("ipv4Compatible:loopback");
    expect(policy.check("64:ff9b::7f00:1")).toBe("nat64:loopback");
    expect(policy.check("2002:7f00:1::")).toBe("6to4:loopback");
  });

  it("matches an IPv4 address against an IPv4-mapped IPv6 entry", () => {
    const policy = createAddressPolicy(["::ffff:10.0.0.0/104"]);
    expect(policy.check("10.1.2.3")).toBeNull();
    expect(policy.check("::ffff:10.1.2.3")).toBeNull();
    expect(policy.check("11.0.0.1")).toBeNull(); // public anyway
    expect(policy.check("192.168.0.1")).toBe("private");
  });

  it("takes bare addresses as /32 and /128", () => {
    const policy = createAddressPolicy(["10.0.0.5", "::1", "fd00:ec2::253"]);
    expect(policy.check("10.0.0.5")).toBeNull();
    expect(policy.check("10.0.0.6")).toBe("private");
    expect(policy.check("::1")).toBeNull();
    expect(policy.check("fd00:ec2::253")).toBeNull();
    expect(policy.check("fd00:ec2::252")).toBe("uniqueLocal");
    expect(policy.check("127.0.0.1")).toBe("loopback");
  });

  it("exempts IPv6 ranges and trims entries", () => {
    const policy = createAddressPolicy([" fd00::/8 ", "2001:db8::/32", "192.168.0.0/16"]);
    expect(policy.check("fd12::1")).toBeNull();
    expect(policy.check("fc00::1")).toBe("uniqueLocal");
    expect(policy.check("2001:db8::42")).toBeNull();
    expect(policy.check("192.168.50.1")).toBeNull();
    expect(policy.check("::ffff:192.168.50.1")).toBeNull();
    expect(policy.check("not-an-ip")).toBe("invalid");
  });

  it("matches on the prefix even when host bits are set in the entry", () => {
    const policy = createAddressPolicy(["10.1.2.3/16"]);
    expect(policy.check("10.1.200.1")).toBeNull();
    expect(policy.check("10.2.0.1")).toBe("private");
  });

  it.each([
    ["", "not an IP address"],
    ["10.0.0.0/", "prefix must be 0-32"],
    ["10.0.0.0/33", "prefix must be 0-32"],
    ["10.0.0.0/8/8", "more than one '/'"],
    ["10.0.0.0/-1", "prefix must be 0-32"],
    ["10.0.0.0/0x8", "prefix must be 0-32"],
    ["::/129", "prefix must be 0-128"],
    ["10.1/16", "not an IP address"],
    ["0x0a000000/8", "not an IP address"],
    ["010.0.0.0/8", "not an IP address"],
    ["fe80::1%eth0/64", "not an IP address"],
    ["example.com", "not an IP address"],
    ["10.0.0.0 /8", "not an IP address"],
  ])("throws on the malformed entry %j", (entry, why) => {
    expect(() => createAddressPolicy([entry])).toThrow(`invalid allowed CIDR "${entry}": ${why}`);
  });
});
