// Submissions and polls per second through the real gateway process against bare Express, same
// client (autocannon, keep-alive), same connections and duration, rounds alternating, medians.
import { QUEUE_NAMES, createQueue, createRedis } from "@gen/queues";
import { closedPort } from "../packages/webhook-sender/test/helpers/receiver.ts";
import type { BenchContext } from "./support/bench-context.ts";
import { startChild } from "./support/child.ts";
import type { Figure } from "./support/figure.ts";
import { load, median } from "./support/load.ts";

const CONNECTIONS = 32;

export async function httpThroughput(ctx: BenchContext): Promise<Figure[]> {
  const { stack, user } = ctx;
  // The gateway is the subject: no worker takes the jobs these submissions enqueue.
  await Promise.all([...stack.workers].map((w) => w.kill("SIGTERM")));
  const port = await closedPort();
  const bare = await startChild("bench/support/bare-server.ts", { PORT: String(port) });
  await bare.message;
  const rounds = ctx.quick ? 1 : 3;
  const seconds = ctx.quick ? 3 : 5;
  const body = JSON.stringify({ model: "sim-image-1", prompt: "a lighthouse at dusk", size: "512x512" });
  const json = { "content-type": "application/json" };
  const gatewayAuth = { ...json, authorization: user.auth };

  const submit = { gateway: [] as number[], bare: [] as number[] };
  const poll = { gateway: [] as number[], bare: [] as number[] };
  // Warm-up: JIT, connection pools, prepared statements.
  await load({ url: `${stack.baseUrl}/api/v1/images/generations`, method: "POST", headers: gatewayAuth, body, connections: CONNECTIONS, seconds: 2 });
  await load({ url: `http://127.0.0.1:${port}/api/v1/images/generations`, method: "POST", headers: json, body, connections: CONNECTIONS, seconds: 1 });
  for (let round = 0; round < rounds; round++) {
    const runGateway = async () => submit.gateway.push(check(await load({ url: `${stack.baseUrl}/api/v1/images/generations`, method: "POST", headers: gatewayAuth, body, connections: CONNECTIONS, seconds }), "gateway submit"));
    const runBare = async () => submit.bare.push(check(await load({ url: `http://127.0.0.1:${port}/api/v1/images/generations`, method: "POST", headers: json, body, connections: CONNECTIONS, seconds }), "bare submit"));
    for (const run of round % 2 === 0 ? [runGateway, runBare] : [runBare, runGateway]) await run();
  }
  const task = await stack.call(user.auth, "POST", "/api/v1/images/generations", JSON.parse(body));
  for (let round = 0; round < rounds; round++) {
    const runGateway = async () => poll.gateway.push(check(await load({ url: `${stack.baseUrl}/api/v1/tasks/${task.body.id}`, method: "GET", headers: { authorization: user.auth }, connections: CONNECTIONS, seconds }), "gateway poll"));
    const runBare = async () => poll.bare.push(check(await load({ url: `http://127.0.0.1:${port}/api/v1/tasks/${task.body.id}`, method: "GET", connections: CONNECTIONS, seconds }), "bare poll"));
    for (const run of round % 2 === 0 ? [runGateway, runBare] : [runBare, runGateway]) await run();
  }
  await bare.stop();

  // Throw the queued work away before a worker comes back: it is not part of later figures.
  const redis = createRedis(stack.env.REDIS_URL!, "request");
  await createQueue(QUEUE_NAMES.generation, redis, stack.env.QUEUE_PREFIX!).obliterate({ force: true });
  redis.disconnect();
  await ctx.db.$executeRawUnsafe(`UPDATE tasks SET status = 'failed', error_code = 80008, finished_at = now() WHERE status IN ('queued', 'in_progress')`);
  await stack.startWorker();

  const figure = (name: string, values: { gateway: number[]; bare: number[] }, target: number): Figure => {
    const value = median(values.gateway);
    const baseline = median(values.bare);
    const ratio = value / baseline;
    return { name, value, unit: "req/s", baseline, ratio, target: `ratio >= ${target}`, pass: ratio >= target, note: `${CONNECTIONS} connections, ${rounds} x ${seconds} s rounds, medians; gateway rounds ${values.gateway.map((v) => v.toFixed(0)).join("/")}, bare ${values.bare.map((v) => v.toFixed(0)).join("/")}` };
  };
  return [figure("submissions (images endpoint)", submit, 0.5), figure("polls (GET /api/v1/tasks/{id})", poll, 0.7)];
}

function check(result: { requestsPerSec: number; non2xx: number; errors: number }, what: string): number {
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${what}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requestsPerSec;
}
