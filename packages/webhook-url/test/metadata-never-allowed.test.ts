import { createAddressPolicy } from "@gen/webhook-url";

// Classification only: every address here is a string handed to the policy; nothing is contacted.
const METADATA: [address: string, reason: string][] = [
  ["169.254.169.254", "cloudMetadata"],
  ["169.254.170.2", "cloudMetadata"],
  ["169.254.170.23", "cloudMetadata"],
  ["100.100.100.200", "cloudMetadata"],
  ["168.63.129.16", "cloudMetadata"],
  ["192.0.0.192", "cloudMetadata"],
  ["fd00:ec2::254", "cloudMetadata"],
  ["fd00:ec2::23", "cloudMetadata"],
  ["fd20:ce::254", "cloudMetadata"],
  ["FD00:EC2:0:0:0:0:0:254", "cloudMetadata"],
  ["fd00:ec2::254%eth0", "cloudMetadata"],
  ["::ffff:169.254.169.254", "ipv4Mapped:cloudMetadata"],
  ["::ffff:a9fe:a9fe", "ipv4Mapped:cloudMetadata"],
  ["::ffff:a9fe:aa02", "ipv4Mapped:cloudMetadata"],
  ["::ffff:6464:64c8", "ipv4Mapped:cloudMetadata"],
  ["64:ff9b::169.254.169.254", "nat64:cloudMetadata"],
  ["64:ff9b::a9fe:aa02", "nat64:cloudMetadata"],
  ["64:ff9b:1::a9fe:a9fe", "cloudMetadata"],
  ["2002:a9fe:a9fe::1", "6to4:cloudMetadata"],
  ["2002:a83f:8110:1::", "6to4:cloudMetadata"],
  ["::169.254.169.254", "ipv4Compatible:cloudMetadata"],
  ["::ffff:0:a9fe:a9fe", "ipv4Translated:cloudMetadata"],
  // Teredo: server 169.254.169.254, and client 169.254.169.254 (stored with every bit inverted).
  ["2001:0:a9fe:a9fe::1", "cloudMetadata"],
  ["2001:0:4136:e378:8000:63bf:5601:5601", "cloudMetadata"],
];

// Operator ranges that cover some or all of the above, up to everything.
const ALLOW_LISTS: string[][] = [
  [],
  ["0.0.0.0/0", "::/0"],
  ["169.254.0.0/16"],
  ["169.254.169.254", "169.254.170.2/32", "100.100.100.200", "168.63.129.16", "192.0.0.192"],
  ["::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32", "::/96"],
  ["fd00::/8", "fd00:ec2::254/128"],
  ["100.64.0.0/10", "168.63.0.0/16", "192.0.0.0/24"],
];

describe.each(ALLOW_LISTS.map((list) => [list.join(",") || "(empty)", list] as const))("allow list %s", (_name, list) => {
  const policy = createAddressPolicy(list);
  it.each(METADATA)("still blocks %s as %s", (address, reason) => {
    expect(policy.check(address)).toBe(reason);
  });
});

describe("only the metadata addresses themselves are pinned", () => {
  it("neighbours inside an allowed range stay allowed", () => {
    const policy = createAddressPolicy(["169.254.0.0/16", "100.64.0.0/10", "fd00::/8", "::ffff:0:0/96"]);
    for (const address of ["169.254.169.253", "169.254.170.3", "169.254.0.1", "100.100.100.201", "fd00:ec2::255", "::ffff:169.254.169.253"]) {
      expect(policy.check(address)).toBeNull();
    }
  });

  it("0.0.0.0/0 still opens private and loopback addresses (the operator asked for it)", () => {
    const policy = createAddressPolicy(["0.0.0.0/0"]);
    expect(policy.check("10.0.0.1")).toBeNull();
    expect(policy.check("127.0.0.1")).toBeNull();
    expect(policy.check("169.254.169.254")).toBe("cloudMetadata");
  });
});
