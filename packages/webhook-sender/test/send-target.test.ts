import { parseSendTarget } from "../src/send-target.ts";

describe("parseSendTarget", () => {
  it.each([
    ["https://hooks.example.com/a%2Fb/./c/../d?a=1&a=2#frag", "/a%2Fb/./c/../d?a=1&a=2"],
    ["https://hooks.example.com/{x}|[y]?q=%zz&r=[1]{2}", "/{x}|[y]?q=%zz&r=[1]{2}"],
    ["https://hooks.example.com", "/"],
    ["https://hooks.example.com?x=1", "/?x=1"],
    ["https://hooks.example.com#only-fragment", "/"],
    ["HTTPS://Hooks.Example.com:8443/Path", "/Path"],
  ])("keeps the request-target of %s verbatim", (url, requestTarget) => {
    expect(parseSendTarget(url)?.requestTarget).toBe(requestTarget);
  });

  it("resolves the parsed (ASCII, lower-case) host name", () => {
    expect(parseSendTarget("https://Bücher.Example/x")?.url.hostname).toBe("xn--bcher-kva.example");
  });

  it.each([
    "http://hooks.example.com/",
    "https://user:pass@hooks.example.com/",
    "https://@hooks.example.com/",
    "https://hooks.example.com\\@evil.example/",
    "https:///hooks.example.com/",
    " https://hooks.example.com/",
    "not a url",
  ])("refuses %s", (url) => {
    expect(parseSendTarget(url)).toBeNull();
  });
});
