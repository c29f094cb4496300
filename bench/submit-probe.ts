// Submissions only, for A/B work on the gateway's CPU per submission: the bench's stack (bench-context.ts),
// the same request and 32 connections as http-throughput.ts, no worker, a 2 s warm-up then
// PROBE_ROUNDS (3) rounds of PROBE_SECONDS (4) s, CPU per submission from /proc for the gateway,
// this run's PostgreSQL backends and Redis. Not a figure of `pnpm bench`: the judged figure stays
// http-throughput's ratio against bare Express.
// `tsx --conditions=@gen/source bench/submit-probe.ts`
import os from "node:os";
import { createBenchContext } from "./support/bench-context.ts";
import { load } from "./support/load.ts";
import { sampleCpu, withDescendants } from "./support/proc-cpu.ts";

const rounds = Number(process.env.PROBE_ROUNDS ?? 3);
const seconds = Number(process.env.PROBE_SECONDS ?? 4);
const ctx = await createBenchContext(true);
try {
  const { stack, user } = ctx;
  await Promise.all([...stack.workers].map((w) => w.kill("SIGTERM")));
  const body = JSON.stringify({ model: "sim-image-1", prompt: "a lighthouse at dusk", size: "512x512" });
  const submit = (secs: number) =>
    load({
      url: `${stack.baseUrl}/api/v1/images/generations`,
      method: "POST",
      headers: { "content-type": "application/json", authorization: user.auth },
      body,
      connections: 32,
      seconds: secs,
    });
  await submit(2);
  const gateway = stack.gateway.child.pid!;
  for (let round = 0; round < rounds; round++) {
    const stop = sampleCpu({ gateway: () => withDescendants(gateway), postgres: ctx.sharedGroups.postgres!, redis: ctx.sharedGroups.redis! });
    const result = await submit(seconds);
    const { ms } = stop();
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
    const per = (name: string) => (ms[name]! / result.requests).toFixed(3);
    process.stdout.write(
      `round ${round + 1}: ${result.requestsPerSec.toFixed(0)}/s; ms per submission gateway ${per("gateway")}, postgres ${per("postgres")}, redis ${per("redis")}; load ${os.loadavg()[0]!.toFixed(2)}\n`,
    );
  }
  // A graceful exit writes a --cpu-prof profile (test/faults/support/app-process.ts); close() kills.
  await stack.gateway.kill("SIGTERM");
} finally {
  await ctx.close();
}
process.exit(0);
