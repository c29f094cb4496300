// GATEWAY_PROCESSES=2: the real gateway main (from sources) as a cluster primary with two
// children on one port. Both children serve requests (each request log line names its pid), the
// primary's metrics port serves their merged counters, a SIGKILLed child is replaced, and SIGTERM
// drains both and exits 0. A start-up failure is one line and exit 1, as with one process.
import { spawn } from "node:child_process";
import { startFaultStack, type FaultStack } from "../faults/support/fault-stack.ts";
import { until } from "../faults/support/load.ts";
import { closedPort } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { callOnOwnConnection, collectLogLines } from "./gateway-children.ts";

const REQUESTS = 16;
let database: ScratchDatabase;
let stack: FaultStack;
let metricsPort: number;
let logLines: Record<string, unknown>[] = [];

const call = callOnOwnConnection;

beforeAll(async () => {
  database = await createScratchDatabase();
  metricsPort = await closedPort();
  stack = await startFaultStack({
    databaseUrl: database.url,
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    env: { GATEWAY_PROCESSES: "2", LOG_LEVEL: "info", GATEWAY_METRICS_PORT: String(metricsPort) },
  });
  logLines = collectLogLines(stack.gateway.child);
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await database?.drop();
});

test("two processes behind one port serve submissions and polls; metrics merged; a killed child is replaced; SIGTERM drains both", async () => {
  const { auth } = await stack.user(1_000);
  const submitted = await Promise.all(
    Array.from({ length: REQUESTS }, () =>
      call("POST", `${stack.baseUrl}/api/v1/images/generations`, auth, { model: "sim-image-1", prompt: "a lighthouse", size: "256x256" }),
    ),
  );
  expect(submitted.map((r) => r.status)).toEqual(Array(REQUESTS).fill(202));
  const polled = await Promise.all(submitted.map((r) => call("GET", `${stack.baseUrl}/api/v1/tasks/${r.body.id}`, auth)));
  expect(polled.map((r) => r.status)).toEqual(Array(REQUESTS).fill(200));

  const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
  const served = [...metrics.matchAll(/^gen_http_requests_total\{[^}]*route="\/api\/v1\/(images\/generations|tasks\/:id)"[^}]*\} (\d+)/gm)].reduce(
    (sum, m) => sum + Number(m[2]),
    0,
  );
  expect(served).toBe(2 * REQUESTS);

  // A child killed outright is replaced, and the port keeps answering. Its request lines are written on a
  // timer (@gen/logger batched-stdout.ts: a SIGKILL loses what is still gathered), which a busy machine
  // delays: the kill waits until every request so far has been seen.
  const apiRequests = () => logLines.filter((line) => line.message === "request" && String(line.path).startsWith("/api/v1/"));
  await until(async () => apiRequests().length >= 2 * REQUESTS, 20_000, "every request's log line");
  const servedBy = new Set(logLines.filter((line) => line.message === "request").map((line) => line.pid as number));
  const [victim] = [...servedBy];
  process.kill(victim!, "SIGKILL");
  const replaced = () => logLines.some((line) => line.message === "gateway listening" && line.pid !== undefined && !servedBy.has(line.pid as number));
  await until(async () => replaced(), 30_000, "a replacement child listening");
  const after = await Promise.all(submitted.map((r) => call("GET", `${stack.baseUrl}/api/v1/tasks/${r.body.id}`, auth)));
  expect(after.map((r) => r.status)).toEqual(Array(REQUESTS).fill(200));

  // `close`, not `exit`: the children write to the same pipe, and what is still in it when the primary
  // exits is read after that. `close` comes once every writer has exited and the pipe is read to its end.
  const exited = new Promise<number | null>((resolve) => stack.gateway.child.once("close", (code) => resolve(code)));
  stack.gateway.child.kill("SIGTERM");
  expect(await exited).toBe(0);

  const requests = apiRequests();
  expect(requests).toHaveLength(3 * REQUESTS);
  const pids = new Set(requests.slice(0, 2 * REQUESTS).map((line) => line.pid));
  expect(pids.size).toBe(2);
  expect(pids.has(stack.gateway.child.pid)).toBe(false);
  // Both live children drained (their lines were written before they exited).
  expect(logLines.filter((line) => line.message === "gateway shutting down" && line.pid !== undefined)).toHaveLength(2);
}, 60_000);

test("PostgreSQL unreachable: one line on stderr and exit status 1, as a single gateway", async () => {
  const closed = await closedPort();
  const child = spawn(process.execPath, ["--conditions=@gen/source", "--import", "tsx", "apps/gateway/src/main.ts"], {
    env: {
      ...process.env,
      NODE_OPTIONS: "",
      GATEWAY_PROCESSES: "3",
      LOG_LEVEL: "silent",
      PORT: "0",
      GATEWAY_METRICS_PORT: "0",
      DATABASE_URL: `postgresql://postgres@127.0.0.1:${closed}/gen`,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)));
  expect(code).toBe(1);
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^gateway: /);
}, 60_000);
