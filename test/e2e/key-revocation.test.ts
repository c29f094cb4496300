// A revoked key is refused on the next request by every gateway process, however the revocation
// reached the database: GATEWAY_PROCESSES=2, the key warm in both processes' key caches, then
// `pnpm admin revoke-key` run with Redis out of its reach (Redis still up for the gateway).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { startFaultStack, type FaultStack } from "../faults/support/fault-stack.ts";
import { until } from "../faults/support/load.ts";
import { closedPort } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { snapshot } from "../../apps/gateway/test/support/test-gateway.ts";
import { callOnOwnConnection, collectLogLines } from "./gateway-children.ts";

const run = promisify(execFile);
// Enough requests, each on a connection of its own, that the cluster's round robin gives both children several.
const REQUESTS = 12;
let database: ScratchDatabase;
let stack: FaultStack;
let logLines: Record<string, unknown>[] = [];

const call = (method: string, path: string, auth: string, body?: unknown) => callOnOwnConnection(method, `${stack.baseUrl}${path}`, auth, body);

/** Request log lines of API calls made by the children (each names its pid). */
const apiLines = () => logLines.filter((line) => line.message === "request" && String(line.path).startsWith("/api/v1/"));

/** How many of `lines` each child (pid) wrote. */
function pidCounts(lines: Record<string, unknown>[]): Map<unknown, number> {
  const perPid = new Map<unknown, number>();
  for (const line of lines) perPid.set(line.pid, (perPid.get(line.pid) ?? 0) + 1);
  return perPid;
}

beforeAll(async () => {
  database = await createScratchDatabase();
  stack = await startFaultStack({
    databaseUrl: database.url,
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    env: { GATEWAY_PROCESSES: "2", LOG_LEVEL: "info" },
  });
  logLines = collectLogLines(stack.gateway.child);
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await database?.drop();
});

test("revoke-key with Redis out of the CLI's reach: the next request on either gateway process answers 10004, and nothing is created", async () => {
  const { userId, auth } = await stack.user(1_000);
  const apiKey = auth.slice("Bearer ".length);
  const submission = { model: "sim-image-1", prompt: "a lighthouse", size: "256x256" };
  const task = await call("POST", "/api/v1/images/generations", auth, submission);
  expect(task.status).toBe(202);
  // Warm the key in both children's caches: every process has answered it at least twice. The
  // cluster's round robin skips a child still busy with its last connection, so on a loaded machine
  // one round of requests can go nearly all to one child: rounds go on until both have answered.
  await until(
    async () => {
      const warm = await Promise.all(Array.from({ length: REQUESTS }, () => call("GET", `/api/v1/tasks/${task.body.id}`, auth)));
      expect(warm.map((r) => r.status)).toEqual(Array(REQUESTS).fill(200));
      const perPid = pidCounts(apiLines());
      return perPid.size === 2 && Math.min(...perPid.values()) >= 2;
    },
    30_000,
    "both children answering the key",
  );

  // The CLI cannot reach Redis; the gateways can.
  const redisAway = `redis://127.0.0.1:${await closedPort()}`;
  const revoking = run("pnpm", ["admin", "revoke-key"], { env: { ...process.env, DATABASE_URL: database.url, REDIS_URL: redisAway } });
  revoking.child.stdin!.end(`${apiKey}\n`);
  const cli = await revoking.then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
  const before = await snapshot(stack.db, userId);

  // Every request after the revocation is refused, by both processes (rounds until both have answered).
  const seen = apiLines().length;
  await until(
    async () => {
      const after = await Promise.all(
        Array.from({ length: REQUESTS }, (_, i) =>
          i % 3 === 0
            ? call("POST", "/api/v1/images/generations", auth, submission)
            : i % 3 === 1
              ? call("GET", `/api/v1/tasks/${task.body.id}`, auth)
              : call("GET", "/api/v1/account", auth),
        ),
      );
      expect(after.map((r) => [r.status, r.body.error?.code])).toEqual(Array(REQUESTS).fill([401, 10004]));
      return pidCounts(apiLines().slice(seen)).size === 2;
    },
    30_000,
    "both children refusing the key",
  );
  expect(await snapshot(stack.db, userId)).toEqual(before);
  // The CLI needs no Redis to revoke: it succeeds and says nothing more.
  expect(cli).toEqual({ code: 0, stdout: '{"revoked":true}\n', stderr: "" });
}, 90_000);
