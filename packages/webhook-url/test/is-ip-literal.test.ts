import { isIpLiteral } from "@gen/webhook-url";

describe("isIpLiteral", () => {
  it.each([
    "127.0.0.1",
    "2130706433",
    "0x7f000001",
    "0177.0.0.1",
    "127.1",
    "0x7f.1",
    "%31%32%37.0.0.1",
    "\uff11\uff12\uff17.\uff10.\uff10.\uff11",
    "127.0.0.1.",
    "0",
    "::1",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "fe80::1%eth0",
  ])("%s is an IP literal", (host) => expect(isIpLiteral(host)).toBe(true));

  it.each(["example.com", "localhost", "127.0.0.1.example.com", "xn--bcher-kva.example", "", "a/b", "user@127.0.0.1", "example.123"])(
    "%s is not an IP literal",
    (host) => expect(isIpLiteral(host)).toBe(false),
  );
});
