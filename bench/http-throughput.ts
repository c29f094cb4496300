// Submissions and polls per second through the real gateway process against bare Express, and
// against two baselines doing the gateway's round trips (support/same-work-server.ts): the
// same-work floor (pg, ioredis, BullMQ called directly).
// Same client (autocannon, keep-alive), connections and duration; rounds rotate the subjects;
// throughput is the median of rounds, CPU per request the sum over rounds from /proc.
import { QUEUE_NAMES, createQueue, createRedis } from "@gen/queues";
import { closedPort } from "../packages/webhook-sender/test/helpers/receiver.ts";
import type { BenchContext } from "./support/bench-context.ts";
import { completeTasks } from "./support/bench-tasks.ts";
import { startChild } from "./support/child.ts";
import { cpuColumns, type Figure } from "./support/figure.ts";
import { load, median, type LoadResult } from "./support/load.ts";
import { CpuTally, sampleCpu, withDescendants } from "./support/proc-cpu.ts";

const CONNECTIONS = 32;

export interface Subject {
  /** Its name in the figures and as its CPU column. */
  name: string;
  url: string;
  pid: number;
  /** The gateway's and the same-work servers' requests carry the user's key. */
  auth: boolean;
}

interface Tally {
  rates: number[];
  cpu: CpuTally;
}

export async function httpThroughput(ctx: BenchContext): Promise<Figure[]> {
  const { stack } = ctx;
  // The gateway is the subject: no worker takes the jobs these submissions enqueue.
  await Promise.all([...stack.workers].map((w) => w.kill("SIGTERM")));
  // BENCH_PROCESSES=N: the gateway runs N cluster children (bench-context.ts) and bare Express the
  // same way; the floor server stays a single process. CPU counts the whole tree.
  const processes = process.env.BENCH_PROCESSES ?? "1";
  const servers = await Promise.all(
    [{ name: "bare" }, { name: "floor", mode: "floor" }].map(async ({ name, mode }) => {
      const port = await closedPort();
      const child = await startChild(mode ? "bench/support/same-work-server.ts" : "bench/support/bare-server.ts", {
        ...stack.env,
        PORT: String(port),
        PROCESSES: mode ? "1" : processes,
      });
      await child.message;
      return { name, port, child };
    }),
  );
  const subjects: Subject[] = [
    { name: "gateway", url: stack.baseUrl, pid: stack.gateway.child.pid!, auth: true },
    ...servers.map((s) => ({ name: s.name, url: `http://127.0.0.1:${s.port}`, pid: s.child.child.pid!, auth: s.name !== "bare" })),
  ];
  const rounds = ctx.quick ? 1 : 3;
  const seconds = ctx.quick ? 3 : 5;
  const { submissions, polls, poll, taskId } = await submissionsAndPolls(ctx, subjects, rounds, seconds);
  // The same task once finished (no webhook): its answer can never change, so the gateway serves it
  // from memory (docs/internals.md "Caches in the gateway"); the baselines do the same work as above.
  await completeTasks(ctx.db, [taskId]);
  for (const s of subjects) await poll(s, 1);
  const finishedPolls = await measure(ctx, subjects, rounds, (s) => poll(s, seconds), "poll");

  await Promise.all(servers.map((s) => s.child.stop()));
  // Throw the queued work away before a worker comes back: it is not part of later figures.
  const redis = createRedis(stack.env.REDIS_URL!, "request");
  await createQueue(QUEUE_NAMES.generation, redis, stack.env.QUEUE_PREFIX!).obliterate({ force: true });
  redis.disconnect();
  await ctx.db.$sql.query(`UPDATE tasks SET status = 'failed', error_code = 80008, finished_at = now() WHERE status IN ('queued', 'in_progress')`);
  await stack.startWorker();

  const describe = (what: string, tallies: Map<string, Tally>, target: number): Figure[] => {
    const bare = tallies.get("bare")!;
    const base = median(bare.rates);
    const bareCpu = bare.cpu.perUnit().bare;
    const rate = (name: string) => median(tallies.get(name)!.rates);
    const rows: { name: string; label: string; target?: number; extra?: string }[] = [
      { name: "gateway", label: `${what}: gateway`, target, extra: `gateway / floor ${(rate("gateway") / rate("floor")).toFixed(2)}` },
      { name: "floor", label: `${what}: same-work floor (pg, ioredis, BullMQ)` },
    ];
    return rows.map(({ name, label, target: t, extra }) => {
      const { rates, cpu } = tallies.get(name)!;
      const value = median(rates);
      const ratio = value / base;
      return {
        name: label,
        value,
        unit: "req/s",
        baseline: base,
        ratio,
        ...(t === undefined ? {} : { target: `ratio >= ${t}`, pass: ratio >= t }),
        cpu: cpuColumns(cpu.perUnit(), bareCpu),
        note: `vs bare Express; ${processes === "1" ? "" : `gateway and bare Express as ${processes} cluster processes; `}${CONNECTIONS} connections, ${rounds} x ${seconds} s rounds, medians; ${name} ${rates.map((v) => v.toFixed(0)).join("/")}, bare ${bare.rates.map((v) => v.toFixed(0)).join("/")}${extra ? `; ${extra}` : ""}`,
      };
    });
  };
  return [
    ...describe("submissions (images endpoint)", submissions, 0.5),
    ...describe("polls (GET /api/v1/tasks/{id})", polls, 0.7),
    ...describe("polls of a finished task", finishedPolls, 0.7),
  ];
}

/**
 * Submissions (images endpoint), then polls of one queued task, each after a warm-up (JIT,
 * connection pools, prepared statements), in rounds over the subjects.
 * `poll` is returned for more rounds of the same task.
 */
export async function submissionsAndPolls(ctx: BenchContext, subjects: Subject[], rounds: number, seconds: number) {
  const { stack, user } = ctx;
  const body = JSON.stringify({ model: "sim-image-1", prompt: "a lighthouse at dusk", size: "512x512" });
  const headers = (s: Subject, json: boolean) => ({ ...(json ? { "content-type": "application/json" } : {}), ...(s.auth ? { authorization: user.auth } : {}) });
  const submit = (s: Subject, secs: number) =>
    load({ url: `${s.url}/api/v1/images/generations`, method: "POST", headers: headers(s, true), body, connections: CONNECTIONS, seconds: secs });
  for (const s of subjects) await submit(s, s.name === "bare" ? 1 : 2);
  const submissions = await measure(ctx, subjects, rounds, (s) => submit(s, seconds), "submit");

  const task = await stack.call(user.auth, "POST", "/api/v1/images/generations", JSON.parse(body));
  const taskId = task.body.id as string;
  const poll = (s: Subject, secs: number) =>
    load({ url: `${s.url}/api/v1/tasks/${taskId}`, method: "GET", headers: headers(s, false), connections: CONNECTIONS, seconds: secs });
  for (const s of subjects) await poll(s, 1);
  const polls = await measure(ctx, subjects, rounds, (s) => poll(s, seconds), "poll");
  return { submissions, polls, poll, taskId };
}

/** Rounds of every subject in turn (the order rotating), each load wrapped in a /proc CPU sample. */
async function measure(
  ctx: BenchContext,
  subjects: Subject[],
  rounds: number,
  run: (s: Subject) => Promise<LoadResult>,
  what: string,
): Promise<Map<string, Tally>> {
  const tallies = new Map(subjects.map((s) => [s.name, { rates: [] as number[], cpu: new CpuTally() }]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < subjects.length; i++) {
      const s = subjects[(i + round) % subjects.length]!;
      const stop = sampleCpu({ [s.name]: () => withDescendants(s.pid), ...ctx.sharedGroups });
      const result = await run(s);
      const sample = stop();
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${s.name} ${what}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      const tally = tallies.get(s.name)!;
      tally.rates.push(result.requestsPerSec);
      tally.cpu.add(sample, result.requests);
    }
  }
  return tallies;
}
