import { ConfigError, loadConfig } from "../src/index.ts";

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.gatewayProcesses).toBe(1);
    expect(config.baseUrl).toBe("http://localhost:8080");
    expect(config.cdnUrl).toBe("http://localhost:8080/cdn");
    expect(config.queuePrefix).toBe("gen");
    expect([config.webhookTimeoutMs, config.webhookRetryDelayMs, config.webhookFinalAttemptMs]).toEqual([10_000, 40_000, 300_000]);
    expect(config.pollRate).toEqual({ perSec: 20, burst: 40 });
    expect(config.submitRate).toEqual({ perSec: 10, burst: 20 });
    expect(config.webhookAllowedCidrs).toEqual([]);
    expect(config.upstreamAllowedCidrs).toEqual(["127.0.0.1"]);
    // docs/configuration.md: 64 attempts per worker process, 32 in flight per receiver fleet-wide, 64 per customer.
    expect([config.deliveryConcurrency, config.webhookHostConcurrency, config.webhookCustomerConcurrency]).toEqual([64, 32, 64]);
  });

  it.each([
    [{ UPSTREAM_URL: "http://10.1.2.3:9000/v1" }, ["10.1.2.3"]],
    [{ UPSTREAM_URL: "http://[fd00::5]:9000" }, ["fd00::5"]],
    [{ UPSTREAM_URL: "http://localhost:8090" }, ["127.0.0.1", "::1"]],
    [{ UPSTREAM_URL: "https://upstream.example.com" }, []],
    [{ UPSTREAM_ALLOWED_CIDRS: " 10.0.0.0/8 , fd00::/8 " }, ["10.0.0.0/8", "fd00::/8"]],
    [{ UPSTREAM_URL: "http://10.1.2.3:9000", UPSTREAM_ALLOWED_CIDRS: "192.168.0.0/16" }, ["192.168.0.0/16"]],
  ])("UPSTREAM_ALLOWED_CIDRS from %p is %p", (env, expected) => {
    expect(loadConfig(env).upstreamAllowedCidrs).toEqual(expected);
  });

  it.each([
    ["PORT", "70000"],
    ["WEBHOOK_TIMEOUT_MS", "0"],
    ["WEBHOOK_RETRY_DELAY_MS", "1.5"],
    ["POLL_RATE_PER_SEC", "-1"],
    ["STORAGE_BACKEND", "ftp"],
    ["BASE_URL", "not a url"],
    ["CONSOLE_PORT", "65536"],
    ["CONSOLE_PORT", "8081x"],
    ["CONSOLE_ON_GATEWAY", "yes"],
    ["CONSOLE_ON_GATEWAY", "1"],
    ["CONSOLE_BASE_URL", "console.internal"],
    ["CONSOLE_SESSION_SECRET", "too short to sign anything"],
    ["GATEWAY_PROCESSES", "0"],
    ["GATEWAY_PROCESSES", "65"],
    ["GATEWAY_PROCESSES", "2.5"],
    ["GATEWAY_PROCESSES", "auto"],
    ["WEBHOOK_CUSTOMER_CONCURRENCY", "0"],
    ["WEBHOOK_CUSTOMER_CONCURRENCY", "many"],
  ])("refuses %s=%s with a ConfigError naming the variable", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it("reads GATEWAY_PROCESSES from 1 to 64", () => {
    expect(loadConfig({ GATEWAY_PROCESSES: "4" }).gatewayProcesses).toBe(4);
    expect(loadConfig({ GATEWAY_PROCESSES: "64" }).gatewayProcesses).toBe(64);
  });

  it("refuses a final attempt that could start before attempt 2 has finished", () => {
    const env = { WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_RETRY_DELAY_MS: "4000" };
    expect(() => loadConfig({ ...env, WEBHOOK_FINAL_ATTEMPT_MS: "5999" })).toThrow(/WEBHOOK_FINAL_ATTEMPT_MS must be at least .* \(6000\)/);
    expect(loadConfig({ ...env, WEBHOOK_FINAL_ATTEMPT_MS: "6000" }).webhookFinalAttemptMs).toBe(6000);
  });

  it("the console: on the gateway by default, its own listener's port and address, an optional secret", () => {
    expect(loadConfig({}).console).toMatchObject({ onGateway: true, port: 8081, baseUrl: "http://localhost:8081", sessionSecret: undefined });
    const own = loadConfig({ CONSOLE_ON_GATEWAY: "false", CONSOLE_PORT: "9443", CONSOLE_SESSION_SECRET: "s".repeat(32) }).console;
    expect(own).toMatchObject({ onGateway: false, port: 9443, baseUrl: "http://localhost:9443", sessionSecret: "s".repeat(32) });
    expect(loadConfig({ CONSOLE_BASE_URL: "https://ops.example.com/" }).console.baseUrl).toBe("https://ops.example.com");
  });

  it("requires a bucket for the S3 backend", () => {
    expect(() => loadConfig({ STORAGE_BACKEND: "s3" })).toThrow("S3_BUCKET");
    expect(loadConfig({ STORAGE_BACKEND: "s3", S3_BUCKET: "media" }).storage.s3Bucket).toBe("media");
  });
});
