// The images' HEALTHCHECK (node is the only program they are sure to have): exits 0 when the app
// answers on loopback within 3 s. gateway: GET /healthz on PORT (the process serves; /readyz,
// which also needs PostgreSQL and Redis, is for load balancers). worker: GET /metrics on
// WORKER_METRICS_PORT, served by the worker's own event loop; with the port turned off (0) there
// is nothing to ask and the check passes. upstream-sim: any HTTP answer on UPSTREAM_SIM_PORT (it
// has no health route; a 404 from it is an answer).
const role = process.argv[2];
const target =
  role === "gateway"
    ? `http://127.0.0.1:${process.env.PORT || 8080}/healthz`
    : role === "worker"
      ? (process.env.WORKER_METRICS_PORT ?? "9091") === "0"
        ? null
        : `http://127.0.0.1:${process.env.WORKER_METRICS_PORT || 9091}/metrics`
      : role === "upstream-sim"
        ? `http://127.0.0.1:${process.env.UPSTREAM_SIM_PORT || 8090}/`
        : undefined;
if (target === undefined) {
  console.error("usage: node healthcheck.mjs gateway|worker|upstream-sim");
  process.exit(2);
}
if (target === null) process.exit(0);
try {
  const res = await fetch(target, { signal: AbortSignal.timeout(3000) });
  process.exit(res.ok || role === "upstream-sim" ? 0 : 1);
} catch {
  process.exit(1);
}
