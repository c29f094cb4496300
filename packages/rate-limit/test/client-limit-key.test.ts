import { clientLimitKey } from "@gen/rate-limit";

describe("clientLimitKey", () => {
  test.each([
    ["192.0.2.1", "192.0.2.1"],
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["::FFFF:c000:0201", "192.0.2.1"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:0DB8:0001:0002:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["2001:db8:0:0:1::", "2001:db8:0:0::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["::", "0:0:0:0::/64"],
    ["64:ff9b::192.0.2.1", "64:ff9b:0:0::/64"],
    ["", "unknown"],
    [undefined, "unknown"],
    ["not an address", "unknown"],
    ["2001:db8::1::2", "unknown"],
  ])("%s counts as %s", (address, key) => {
    expect(clientLimitKey(address)).toBe(key);
  });

  test("every address of one /64 shares a key; the next /64 has another", () => {
    const keys = new Set(Array.from({ length: 60 }, (_, i) => clientLimitKey(`2001:db8:aa:bb:${i.toString(16)}:${((i * 7919) & 0xffff).toString(16)}::${i}`)));
    expect([...keys]).toEqual(["2001:db8:aa:bb::/64"]);
    expect(clientLimitKey("2001:db8:aa:bc::1")).not.toBe(clientLimitKey("2001:db8:aa:bb::1"));
  });
});
