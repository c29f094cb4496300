import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createMetrics } from "../src/create-metrics.ts";
import { startMetricsServer } from "../src/start-metrics-server.ts";

const logger = { info: () => {}, warn: () => {}, error: () => {} };
// The defaults of HTTP_* (docs/configuration.md).
const HTTP = { headersTimeoutMs: 10_000, requestTimeoutMs: 120_000, keepAliveTimeoutMs: 5000, maxConnections: 10_000 };
const close = (server: Server) => new Promise((resolve) => server.close(resolve));

test("port 0 means no server", async () => {
  expect(await startMetricsServer(createMetrics({ defaultMetrics: false }), 0, HTTP, logger, "worker")).toBeUndefined();
});

test("a taken port is not fatal: the worker runs without metrics", async () => {
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, resolve));
  try {
    const port = (squatter.address() as AddressInfo).port;
    expect(await startMetricsServer(createMetrics({ defaultMetrics: false }), port, HTTP, logger, "worker")).toBeUndefined();
  } finally {
    await close(squatter);
  }
});

test("serves GET /metrics on the port", async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as AddressInfo).port;
  await close(probe);
  const server = await startMetricsServer(createMetrics({ defaultMetrics: false }), port, HTTP, logger, "worker");
  expect(server).toBeDefined();
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("# TYPE tasks_finished_total counter");
  } finally {
    await close(server!);
  }
});
