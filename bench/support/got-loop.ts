// The baseline of the delivery figure: a bare got loop, as little as a sender can do: N POSTs of a
// task-sized JSON body to the receiver over keep-alive HTTPS, CONCURRENCY at once. Runs in its own
// process like the worker; the name resolves through the same loopback preload.
import https from "node:https";
import got from "got";

const url = process.env.URL!;
const count = Number(process.env.COUNT);
const concurrency = Number(process.env.CONCURRENCY);
const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency });
const client = got.extend({ agent: { https: agent }, retry: { limit: 0 }, followRedirect: false, throwHttpErrors: false, timeout: { request: 10_000 } });
const body = (i: number) =>
  JSON.stringify({
    id: `task_bench_${i}`,
    object: "task",
    status: "completed",
    model: "sim-image-1",
    output: { image_urls: [`https://cdn.bench.example/tasks/${i}/0.png`] },
    error: null,
    usage: { credits: 4 },
  });

let next = 0;
const started = performance.now();
// Its own CPU over the loop only (not the start-up), as /proc's utime + stime would count it.
const cpuBefore = process.cpuUsage();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++;
      await client.post(url, { body: body(i), headers: { "content-type": "application/json", "user-agent": "service-Webhook/1" } });
    }
  }),
);
const cpu = process.cpuUsage(cpuBefore);
process.send?.({ elapsedMs: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000 });
agent.destroy();
process.disconnect?.();
