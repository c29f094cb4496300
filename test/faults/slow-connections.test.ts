// Fault: a thousand clients (fewer under a low `ulimit -n`) trickle a request a byte at a time and
// never finish it (slowloris), while a customer polls. Node's header deadline
// (HTTP_HEADERS_TIMEOUT_MS) closes each trickling socket with 408 soon after it runs out, and polls
// keep being answered meanwhile. Beyond
// HTTP_MAX_CONNECTIONS a process closes new connections at once, and those it holds keep working.
import { execFileSync } from "node:child_process";
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { closedPort } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { startApp, type AppProcess } from "./support/app-process.ts";
import { failWithAppOutput, startFaultStack, type FaultStack } from "./support/fault-stack.ts";
import { until } from "./support/load.ts";
import { connectAndGet, getOn, startTrickle } from "./support/trickle.ts";
import { findTask } from "@gen/db";

// The test holds as many client sockets as it trickles and the gateway as many server sockets, each
// process within the same `ulimit -n` (the child inherits it): 1,000, or a third of a lower limit.
const FD_LIMIT = Number(execFileSync("sh", ["-c", "ulimit -n"]).toString().trim());
const TRICKLING = Math.min(1000, Math.floor(FD_LIMIT / 3));
const HEADERS_TIMEOUT_MS = 3000;
// A byte every 500 ms per socket: never idle long enough for a socket time-out, never done.
const BYTE_EVERY_MS = 500;
const POLL_EVERY_MS = 50;
const PHASE_MS = 8000;
const CAP = 20;

let database: ScratchDatabase | undefined;
let stack: FaultStack | undefined;
const extra: AppProcess[] = [];
const fail = (error: unknown): never => failWithAppOutput(stack, error);

/** Polls one task every ~50 ms for `ms`; every answer's latency, and the failures. */
async function pollFor(auth: string, id: string, ms: number): Promise<{ latencies: number[]; failures: string[] }> {
  const latencies: number[] = [];
  const failures: string[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const started = Date.now();
    try {
      const answer = await stack!.call(auth, "GET", `/api/v1/tasks/${id}`);
      if (answer.status === 200) latencies.push(answer.ms);
      else failures.push(`status ${answer.status}`);
    } catch (error) {
      failures.push(String(error));
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, POLL_EVERY_MS - (Date.now() - started))));
  }
  return { latencies, failures };
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

describe("slow and surplus connections", () => {
  beforeAll(async () => {
    if (TRICKLING < 100) throw new Error(`ulimit -n is ${FD_LIMIT}: too low for a flood of trickling sockets (a third of it, at least 100, is needed)`);
    if (TRICKLING < 1000) process.stdout.write(`ulimit -n is ${FD_LIMIT}: trickling ${TRICKLING} sockets rather than 1000 (a third of the limit)\n`);
    database = await createScratchDatabase();
    stack = await startFaultStack({
      databaseUrl: database.url,
      redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      env: { HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), HTTP_REQUEST_TIMEOUT_MS: "10000" },
    });
  });
  afterAll(async () => {
    await Promise.all(extra.map((p) => p.kill("SIGKILL")));
    await stack?.close();
    await database?.drop();
  });

  test(`${TRICKLING} trickling connections are closed after the header deadline while polls keep answering`, async () => {
    const { auth } = await stack!.user();
    const submitted = await stack!.call(auth, "POST", "/api/v1/detect", { model: "sim-detect-1", text: "polled through the trickle" });
    expect(submitted.status).toBe(202);
    const id = submitted.body.id as string;
    await until(async () => (await findTask(stack!.db, id))?.status === "completed", 20_000, "task completed").catch(fail);
    const port = Number(new URL(stack!.baseUrl).port);

    const baseline = await pollFor(auth, id, PHASE_MS);
    const trickle = await startTrickle(port, TRICKLING, BYTE_EVERY_MS);
    const under = await pollFor(auth, id, PHASE_MS);
    // No more replacements: the server must close every socket still trickling by itself.
    const report = await trickle.stop(HEADERS_TIMEOUT_MS + 15_000);

    const line = (name: string, polls: { latencies: number[]; failures: string[] }) =>
      `${name}: ${polls.latencies.length} polls, p50 ${percentile(polls.latencies, 50)} ms, p99 ${percentile(polls.latencies, 99)} ms, max ${Math.max(...polls.latencies)} ms, ${polls.failures.length} failed`;
    const lifetimes = report.closedByServerMs;
    process.stdout.write(
      [
        line("polls, baseline", baseline),
        line(`polls, ${TRICKLING} trickling`, under),
        `trickling sockets: ${report.opened} opened, ${report.peakOpen} open at once, ${lifetimes.length} closed by the server ` +
          `(${report.answered408} with 408) after p50 ${percentile(lifetimes, 50)} ms, max ${Math.max(...lifetimes)} ms ` +
          `(HTTP_HEADERS_TIMEOUT_MS ${HEADERS_TIMEOUT_MS}); ${report.leftOpen} left open`,
      ].join("\n") + "\n",
    );

    expect(report.peakOpen).toBe(TRICKLING);
    expect(report.leftOpen).toBe(0);
    expect(lifetimes.length).toBe(report.opened);
    // Node checks the deadlines once a second; the rest is a loaded machine's slack.
    expect(Math.max(...lifetimes)).toBeLessThan(HEADERS_TIMEOUT_MS + 10_000);
    expect(Math.min(...lifetimes)).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(baseline.failures).toEqual([]);
    expect(under.failures).toEqual([]);
    expect(under.latencies.length).toBeGreaterThan(10);
    expect(percentile(under.latencies, 99)).toBeLessThan(3000);
  }, 120_000);

  test("the console's own listener closes a trickling connection after the header deadline too", async () => {
    const consolePort = await closedPort();
    extra.push(await startApp("console", { ...stack!.env, CONSOLE_PORT: String(consolePort) }).catch(fail));
    const trickle = await startTrickle(consolePort, 10, BYTE_EVERY_MS);
    const report = await trickle.stop(HEADERS_TIMEOUT_MS + 15_000);
    process.stdout.write(`console: ${report.closedByServerMs.length} trickling sockets closed by the server after ${report.closedByServerMs.join(", ")} ms\n`);
    expect(report.leftOpen).toBe(0);
    expect(report.closedByServerMs).toHaveLength(10);
    expect(Math.max(...report.closedByServerMs)).toBeLessThan(HEADERS_TIMEOUT_MS + 10_000);
  }, 60_000);

  test(`HTTP_MAX_CONNECTIONS=${CAP}: connection ${CAP + 1} is closed unanswered, the ${CAP} held keep working, a freed place is taken again`, async () => {
    const port = await closedPort();
    const env = {
      ...stack!.env,
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      HTTP_MAX_CONNECTIONS: String(CAP),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: "60000",
    };
    extra.push(await startApp("gateway", env, "capped-gateway").catch(fail));

    const held = [];
    for (let i = 0; i < CAP; i++) held.push(await connectAndGet(port, "/healthz"));
    expect(held.map((h) => h.status)).toEqual(Array(CAP).fill(200));

    const surplus = await connectAndGet(port, "/healthz").then(
      (answer) => `answered ${answer.status}`,
      (error: Error) => `refused: ${error.message}`,
    );
    expect(surplus).toMatch(/^refused/);
    // The held connections still carry requests.
    expect(await Promise.all(held.map((h) => getOn(h.socket, "/healthz")))).toEqual(Array(CAP).fill(200));

    held.pop()!.socket.destroy();
    const again = await until(
      () =>
        connectAndGet(port, "/healthz").then(
          (answer) => answer,
          () => null,
        ),
      10_000,
      "a connection accepted once one closed",
    );
    expect(again.status).toBe(200);
    process.stdout.write(`cap ${CAP}: connection ${CAP + 1} ${surplus}; the ${CAP} held answered again; a new one accepted after one closed\n`);
    for (const h of [...held, again]) h.socket.destroy();
  }, 60_000);
});
