// What tracing costs the gateway's hot paths: submissions and polls through three processes in the
// same run, rounds rotating: the gateway with no OTEL_* variable (tracing off), the gateway with an
// OTLP endpoint and every request sampled (the default parentbased_always_on; spans exported as
// http/protobuf to a collector on loopback that reads and drops them), and bare Express. Prints
// req/s (medians of rounds), the ratio to bare Express, and the gateway's CPU per request from
// /proc, also in units of the same run's bare Express POST. BENCH_BASE_TREE=<dir> adds a fourth
// subject: the gateway of another source tree (an unpacked earlier commit, `git archive`, with
// node_modules linked in), on the same database and Redis, to compare tracing off with the code
// before tracing existed in the same run.
// pnpm exec tsx --conditions=@gen/source bench/tracing-cost.ts   (BENCH_QUICK=1: one round of 3 s)
import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { closedPort } from "../packages/webhook-sender/test/helpers/receiver.ts";
import { startApp } from "../test/faults/support/app-process.ts";
import { submissionsAndPolls, type Subject } from "./http-throughput.ts";
import { createBenchContext } from "./support/bench-context.ts";
import { startChild } from "./support/child.ts";
import { median } from "./support/load.ts";

const CONNECTIONS = 32;
const quick = process.env.BENCH_QUICK === "1";
const rounds = quick ? 1 : 3;
const seconds = quick ? 3 : 5;

// The collector: reads each export and answers 200, keeping only counts.
let exports = 0;
let exportedBytes = 0;
const collector = http.createServer((req, res) => {
  req.on("data", (chunk: Buffer) => (exportedBytes += chunk.length));
  req.on("end", () => {
    exports++;
    res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
  });
});
collector.listen(0, "127.0.0.1");
await new Promise((resolve) => collector.once("listening", resolve));

const ctx = await createBenchContext(quick);
const { stack } = ctx;
const tracedPort = await closedPort();
const barePort = await closedPort();
const bareChild = await startChild("bench/support/bare-server.ts", { PORT: String(barePort), PROCESSES: "1" });
try {
  await Promise.all([...stack.workers].map((w) => w.kill("SIGTERM")));
  const traced = await startApp(
    "gateway",
    {
      ...stack.env,
      PORT: String(tracedPort),
      BASE_URL: `http://127.0.0.1:${tracedPort}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    },
    "gateway-traced",
  );
  await bareChild.message;
  const base = process.env.BENCH_BASE_TREE ? await startBaseGateway(process.env.BENCH_BASE_TREE, stack.env) : undefined;
  const subjects: Subject[] = [
    { name: "gateway", url: stack.baseUrl, pid: stack.gateway.child.pid!, auth: true },
    { name: "traced", url: `http://127.0.0.1:${tracedPort}`, pid: traced.child.pid!, auth: true },
    { name: "bare", url: `http://127.0.0.1:${barePort}`, pid: bareChild.child.pid!, auth: false },
    ...(base ? [{ name: "before", url: base.url, pid: base.pid, auth: true }] : []),
  ];
  const { submissions, polls } = await submissionsAndPolls(ctx, subjects, rounds, seconds);
  await traced.kill("SIGTERM");
  if (base) process.kill(base.pid, "SIGTERM");

  for (const [what, tallies] of [
    ["submissions", submissions],
    ["polls", polls],
  ] as const) {
    const bare = tallies.get("bare")!;
    const bareRate = median(bare.rates);
    const unit = bare.cpu.perUnit().bare!;
    process.stdout.write(
      `\n${what} (${rounds} x ${seconds} s rounds, ${CONNECTIONS} connections; bare Express ${bareRate.toFixed(0)} req/s, ${unit.toFixed(3)} ms CPU per request)\n`,
    );
    for (const name of ["before", "gateway", "traced"]) {
      if (!tallies.has(name)) continue;
      const { rates, cpu } = tallies.get(name)!;
      const ms = cpu.perUnit()[name]!;
      const label = { before: "before tracing (base)", gateway: "tracing off", traced: "tracing on, all sampled" }[name]!;
      process.stdout.write(
        `  ${label.padEnd(24)} ${median(rates).toFixed(0).padStart(6)} req/s  ratio ${(median(rates) / bareRate).toFixed(2)}  gateway CPU ${ms.toFixed(3)} ms/req = ${(ms / unit).toFixed(2)} bare-POST units  (rounds ${rates.map((r) => r.toFixed(0)).join("/")})\n`,
      );
    }
  }
  process.stdout.write(`\ncollector: ${exports} exports, ${(exportedBytes / 1e6).toFixed(1)} MB\n`);
} finally {
  await bareChild.stop();
  await ctx.close();
  collector.close();
}

/** The gateway of another source tree, on the same database, Redis and QUEUE_PREFIX, ready on its IPC message. */
async function startBaseGateway(tree: string, env: Record<string, string>): Promise<{ url: string; pid: number }> {
  const port = await closedPort();
  const child = spawn(process.execPath, ["--conditions=@gen/source", "--import", "tsx", "apps/gateway/src/main.ts"], {
    cwd: tree,
    env: { ...process.env, ...env, PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, GATEWAY_METRICS_PORT: "0", NODE_OPTIONS: "" },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  await new Promise((resolve, reject) => {
    child.once("message", resolve);
    child.once("exit", (code) => reject(new Error(`base gateway exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid! };
}
