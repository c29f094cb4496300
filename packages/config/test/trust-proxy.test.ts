import { ConfigError, loadConfig } from "../src/index.ts";

describe("TRUST_PROXY", () => {
  it.each([
    [undefined, false],
    ["", false],
    ["false", false],
    ["0", false],
    ["2", 2],
    ["loopback", ["loopback"]],
    ["10.0.0.0/8, 127.0.0.1, ::1, fd00::/8, uniquelocal", ["10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8", "uniquelocal"]],
  ])("%j -> %j", (raw, expected) => {
    expect(loadConfig(raw === undefined ? {} : { TRUST_PROXY: raw }).trustProxy).toEqual(expected);
  });

  // "true"/"all" would let any client claim any address.
  it.each(["true", "all", "*", "10.0.0.0/33", "::1/129", "10.0.0.0/8/1", "example.com", "-1", "1.5", "99"])("refuses %j", (raw) => {
    expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(ConfigError);
  });
});

it("bad-key limit defaults: 30 per address per minute, burst 30", () => {
  expect(loadConfig({}).badKeyRate).toEqual({ perSec: 0.5, burst: 30 });
});
