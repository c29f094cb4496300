import { ConfigError, loadConfig } from "../src/index.ts";

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.gatewayProcesses).toBe(1);
    expect(config.databasePoolSize).toBe(10);
    expect(config.baseUrl).toBe("http://localhost:8080");
    expect(config.cdnUrl).toBe("http://localhost:8080/cdn");
    expect(config.queuePrefix).toBe("gen");
    expect([config.webhookTimeoutMs, config.webhookRetryDelayMs, config.webhookFinalAttemptMs]).toEqual([10_000, 40_000, 300_000]);
    expect(config.pollRate).toEqual({ perSec: 20, burst: 40 });
    expect(config.submitRate).toEqual({ perSec: 10, burst: 20 });
    expect(config.webhookAllowedCidrs).toEqual([]);
    expect(config.upstreamAllowedCidrs).toEqual(["127.0.0.1"]);
    expect(config.upstreamMaxResponseBytes).toBe(1_048_576);
    expect(config.inputUrlAllowedCidrs).toEqual([]);
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
    ["DATABASE_POOL_SIZE", "0"],
    ["DATABASE_POOL_SIZE", "1"],
    ["DATABASE_POOL_SIZE", "-4"],
    ["DATABASE_POOL_SIZE", "2.5"],
    ["DATABASE_POOL_SIZE", "1e3x"],
    ["DATABASE_POOL_SIZE", "ten"],
    ["DATABASE_POOL_SIZE", "1001"],
    ["DATABASE_POOL_SIZE", "99999999999999999999"],
    ["UPSTREAM_MAX_RESPONSE_BYTES", "0"],
    ["UPSTREAM_MAX_RESPONSE_BYTES", "1MiB"],
    ["WEBHOOK_CUSTOMER_CONCURRENCY", "0"],
    ["WEBHOOK_CUSTOMER_CONCURRENCY", "many"],
  ])("refuses %s=%s with a ConfigError naming the variable", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it("reads UPSTREAM_MAX_RESPONSE_BYTES and INPUT_URL_ALLOWED_CIDRS", () => {
    const config = loadConfig({ UPSTREAM_MAX_RESPONSE_BYTES: "65536", INPUT_URL_ALLOWED_CIDRS: " 10.20.0.0/16 , fd00:1::/64 " });
    expect(config.upstreamMaxResponseBytes).toBe(65536);
    expect(config.inputUrlAllowedCidrs).toEqual(["10.20.0.0/16", "fd00:1::/64"]);
  });

  it("reads DATABASE_POOL_SIZE from 2 to 1000", () => {
    expect(loadConfig({ DATABASE_POOL_SIZE: "2" }).databasePoolSize).toBe(2);
    expect(loadConfig({ DATABASE_POOL_SIZE: "25" }).databasePoolSize).toBe(25);
    expect(loadConfig({ DATABASE_POOL_SIZE: "1000" }).databasePoolSize).toBe(1000);
  });

  it("retention is off by default; TASK_RETENTION_DAYS, MEDIA_RETENTION_DAYS and TASK_ARCHIVE are validated", () => {
    expect(loadConfig({}).retention).toEqual({ taskDays: undefined, mediaDays: undefined, archive: "off" });
    expect(loadConfig({ TASK_RETENTION_DAYS: "90", MEDIA_RETENTION_DAYS: "30", TASK_ARCHIVE: "storage" }).retention).toEqual({
      taskDays: 90,
      mediaDays: 30,
      archive: "storage",
    });
    expect(loadConfig({ MEDIA_RETENTION_DAYS: "7" }).retention.mediaDays).toBe(7);
    for (const value of ["0", "-1", "1.5", "ninety", "36501"]) expect(() => loadConfig({ TASK_RETENTION_DAYS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ MEDIA_RETENTION_DAYS: "0" })).toThrow(ConfigError);
    expect(() => loadConfig({ TASK_RETENTION_DAYS: "7", MEDIA_RETENTION_DAYS: "30" })).toThrow(/must not exceed TASK_RETENTION_DAYS/);
    expect(() => loadConfig({ TASK_ARCHIVE: "storage" })).toThrow(/needs TASK_RETENTION_DAYS/);
    expect(() => loadConfig({ TASK_RETENTION_DAYS: "7", TASK_ARCHIVE: "s3" })).toThrow(ConfigError);
  });

  it("reads GATEWAY_PROCESSES from 1 to 64", () => {
    expect(loadConfig({ GATEWAY_PROCESSES: "4" }).gatewayProcesses).toBe(4);
    expect(loadConfig({ GATEWAY_PROCESSES: "64" }).gatewayProcesses).toBe(64);
  });

  it("HTTP listener deadlines and cap: defaults, overrides, and a header deadline past the request's refused", () => {
    expect(loadConfig({}).http).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 120_000, keepAliveTimeoutMs: 5_000, maxConnections: 10_000 });
    const env = { HTTP_HEADERS_TIMEOUT_MS: "3000", HTTP_REQUEST_TIMEOUT_MS: "3000", HTTP_KEEP_ALIVE_TIMEOUT_MS: "65000", HTTP_MAX_CONNECTIONS: "20" };
    expect(loadConfig(env).http).toEqual({ headersTimeoutMs: 3000, requestTimeoutMs: 3000, keepAliveTimeoutMs: 65_000, maxConnections: 20 });
    expect(() => loadConfig({ ...env, HTTP_REQUEST_TIMEOUT_MS: "2999" })).toThrow(
      "HTTP_HEADERS_TIMEOUT_MS (3000) must not exceed HTTP_REQUEST_TIMEOUT_MS (2999)",
    );
    for (const [name, value] of [
      ["HTTP_HEADERS_TIMEOUT_MS", "999"],
      ["HTTP_MAX_CONNECTIONS", "0"],
      ["HTTP_KEEP_ALIVE_TIMEOUT_MS", "5s"],
    ]) {
      expect(() => loadConfig({ [name!]: value })).toThrow(name);
    }
  });

  it("refuses a final attempt that leaves attempt 2 no time to be recovered (lost attempt, Redis loss) and finish", () => {
    // Attempt 1 up to 2 s + 3 s, the reconciler's grace and period 2 x 15 s, the retry delay 5 s, attempt 2's 3 s.
    const example = { WEBHOOK_TIMEOUT_MS: "3000", WEBHOOK_RETRY_DELAY_MS: "5000", WEBHOOK_FINAL_ATTEMPT_MS: "12000" };
    expect(() => loadConfig(example)).toThrow(
      "WEBHOOK_FINAL_ATTEMPT_MS must be at least WEBHOOK_RETRY_DELAY_MS + 2 x WEBHOOK_TIMEOUT_MS + 2 s + 2 x RECONCILE_INTERVAL_MS (43000), got 12000: attempt 2 after a lost attempt or a Redis loss could not finish inside its window",
    );
    expect(() => loadConfig({ ...example, WEBHOOK_FINAL_ATTEMPT_MS: "42999" })).toThrow(ConfigError);
    expect(loadConfig({ ...example, WEBHOOK_FINAL_ATTEMPT_MS: "43000" }).webhookFinalAttemptMs).toBe(43_000);
    // A shorter reconciler interval shortens the recovery: 5 + 6 + 2 + 2 x 1 s.
    const fastReconciler = { ...example, RECONCILE_INTERVAL_MS: "1000" };
    expect(() => loadConfig(fastReconciler)).toThrow(/\(15000\), got 12000/);
    expect(loadConfig({ ...fastReconciler, WEBHOOK_FINAL_ATTEMPT_MS: "15000" }).webhookFinalAttemptMs).toBe(15_000);
    // The defaults fit: 40 + 20 + 2 + 30 s against 300 s.
    expect(loadConfig({}).webhookFinalAttemptMs).toBe(300_000);
  });

  it("the console: on the gateway by default, its own listener's port and address, an optional secret", () => {
    expect(loadConfig({}).console).toMatchObject({ onGateway: true, port: 8081, baseUrl: "http://localhost:8081", sessionSecret: undefined });
    const own = loadConfig({ CONSOLE_ON_GATEWAY: "false", CONSOLE_PORT: "9443", CONSOLE_SESSION_SECRET: "s".repeat(32) }).console;
    expect(own).toMatchObject({ onGateway: false, port: 9443, baseUrl: "http://localhost:9443", sessionSecret: "s".repeat(32) });
    expect(loadConfig({ CONSOLE_BASE_URL: "https://ops.example.com/" }).console.baseUrl).toBe("https://ops.example.com");
  });

  it("METRICS_PREFIX is gen_ unless set to a Prometheus name start; BUILD_COMMIT is optional", () => {
    expect(loadConfig({})).toMatchObject({ metricsPrefix: "gen_", buildCommit: undefined });
    expect(loadConfig({ METRICS_PREFIX: "acme_", BUILD_COMMIT: "0123abc" })).toMatchObject({ metricsPrefix: "acme_", buildCommit: "0123abc" });
    for (const prefix of ["1gen_", "gen-", 'x"} 1\n', "gen_{a}", "é_", "a".repeat(65)]) {
      expect(() => loadConfig({ METRICS_PREFIX: prefix })).toThrow("METRICS_PREFIX");
    }
    for (const commit of ['a"b', "a b", "x".repeat(65), "abc\n"]) expect(() => loadConfig({ BUILD_COMMIT: commit })).toThrow("BUILD_COMMIT");
  });

  it("requires a bucket for the S3 backend", () => {
    expect(() => loadConfig({ STORAGE_BACKEND: "s3" })).toThrow("S3_BUCKET");
    expect(loadConfig({ STORAGE_BACKEND: "s3", S3_BUCKET: "media" }).storage.s3Bucket).toBe("media");
  });
});
