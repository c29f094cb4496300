import { ConfigError, loadConfig } from "../src/index.ts";

const SECRET = "k".repeat(32);

test("callbacks are off by default", () => {
  expect(loadConfig({}).upstreamCallback).toBeUndefined();
  // A secret alone turns nothing on.
  expect(loadConfig({ UPSTREAM_CALLBACK_SECRET: SECRET }).upstreamCallback).toBeUndefined();
});

test("an http(s) base with a secret: the base without its trailing slash", () => {
  expect(loadConfig({ UPSTREAM_CALLBACK_URL: "https://gen.example.com/hooks/", UPSTREAM_CALLBACK_SECRET: SECRET }).upstreamCallback).toEqual({
    url: "https://gen.example.com/hooks",
    secret: SECRET,
  });
  expect(loadConfig({ UPSTREAM_CALLBACK_URL: "http://127.0.0.1:8080", UPSTREAM_CALLBACK_SECRET: SECRET }).upstreamCallback?.url).toBe("http://127.0.0.1:8080");
});

test.each(["ftp://gen.example.com", "gen.example.com", "https://gen.example.com/?a=1", "https://gen.example.com/#x", "https://user:pw@gen.example.com"])(
  "UPSTREAM_CALLBACK_URL %p is refused",
  (url) => {
    expect(() => loadConfig({ UPSTREAM_CALLBACK_URL: url, UPSTREAM_CALLBACK_SECRET: SECRET })).toThrow(ConfigError);
  },
);

test("the secret is required with the address, and must not be short", () => {
  expect(() => loadConfig({ UPSTREAM_CALLBACK_URL: "https://gen.example.com" })).toThrow(/UPSTREAM_CALLBACK_SECRET/);
  expect(() => loadConfig({ UPSTREAM_CALLBACK_URL: "https://gen.example.com", UPSTREAM_CALLBACK_SECRET: "short" })).toThrow(/UPSTREAM_CALLBACK_SECRET/);
});
