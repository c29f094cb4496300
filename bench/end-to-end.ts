// Submission to webhook received, through the real gateway and worker with the simulated provider.
import type { BenchContext } from "./support/bench-context.ts";
import { cpuColumns, type Figure } from "./support/figure.ts";
import { median, percentile } from "./support/load.ts";
import { CpuTally, sampleCpu } from "./support/proc-cpu.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export async function endToEnd(ctx: BenchContext): Promise<Figure[]> {
  const { stack, receiver, user } = ctx;
  const rate = 20;
  const count = ctx.quick ? 60 : 300;
  const sent = new Map<string, number>();
  const cpu = new CpuTally();
  const stop = sampleCpu({ gateway: () => [stack.gateway.child.pid!], worker: () => stack.workers.map((w) => w.child.pid!), ...ctx.sharedGroups });
  const begin = Date.now();
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      await sleep(begin + (i * 1000) / rate - Date.now());
      const at = Date.now();
      const res = await stack.call(user.auth, "POST", "/api/v1/images/generations", {
        model: "sim-image-1",
        prompt: `bench ${i}`,
        size: "256x256",
        webhook_url: receiver.url,
      });
      if (res.status !== 202) throw new Error(`submission answered ${res.status} ${JSON.stringify(res.body)}`);
      sent.set(res.body.id as string, at);
    }),
  );
  const deadline = Date.now() + 60_000;
  while ([...sent.keys()].some((id) => !receiver.posts.has(id))) {
    if (Date.now() > deadline) throw new Error("end-to-end: webhooks missing after 60 s");
    await sleep(10);
  }
  cpu.add(stop(), count);
  const lags = [...sent].map(([id, at]) => receiver.posts.get(id)![0]!.at - at);
  const note = `${count} image tasks (sim-image-1, 256x256 PNG stored) at ${rate}/s`;
  return [
    {
      name: "submission to webhook received, median",
      value: median(lags),
      unit: "ms",
      cpu: cpuColumns(cpu.perUnit()),
      note: `${note}; CPU per task: submission, generation, settlement, delivery`,
    },
    { name: "submission to webhook received, p99", value: percentile(lags, 99), unit: "ms", note: `max ${Math.max(...lags)} ms` },
  ];
}
