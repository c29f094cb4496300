import { webhookRequestTarget } from "@gen/webhook-url";

describe("webhookRequestTarget", () => {
  it.each([
    ["https://example.com/hook", "/hook"],
    ["https://example.com", "/"],
    ["https://example.com?x=1", "/?x=1"],
    ["https://example.com:443/a/../b?c=%2F&d", "/a/../b?c=%2F&d"],
    ["https://example.com/a/%2e%2e/b", "/a/%2e%2e/b"],
    ["https://example.com/%zz?%", "/%zz?%"],
    ["https://example.com/hook?token=s3cr3t#frag", "/hook?token=s3cr3t"],
    ["https://example.com#frag", "/"],
    ["https://example.com?a#b?c", "/?a"],
  ])("%s -> %s (path and query as written)", (url, target) => {
    expect(webhookRequestTarget(url)).toBe(target);
  });

  it("throws for a URL that validateWebhookUrl refuses", () => {
    expect(() => webhookRequestTarget("http://example.com/")).toThrow("webhook_url must use https");
    expect(() => webhookRequestTarget("https://127.0.0.1/")).toThrow("not a valid webhook URL");
  });
});
