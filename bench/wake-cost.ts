// CPU per loopback round trip on this machine, back to back and paced 2 and 5 ms apart: what one
// round trip (a statement, a Redis call, a POST) costs each side when the processes are busy, and
// when each one goes idle between round trips and must be woken, as at a low task rate. On the
// project's 2-core VMs the paced round trips cost each side 2-5 times the back-to-back ones, which
// is why a dispatch figure's CPU per task is higher at 200 tasks/s than at 500 (bench/README.md).
//
//   pnpm exec tsx --conditions=@gen/source bench/wake-cost.ts
import net from "node:net";
import { startChild } from "./support/child.ts";

const server = await startChild("bench/support/echo-child.ts", {});
const port = (await server.message) as number;
const serverCpuMs = () =>
  new Promise<number>((resolve) => {
    server.child.once("message", (message) => resolve((message as { cpuMs: number }).cpuMs));
    server.child.send("cpu");
  });
const socket = net.connect(port, "127.0.0.1");
socket.setNoDelay(true);
await new Promise((resolve) => socket.once("connect", resolve));
const payload = "x".repeat(100);
const roundTrip = () =>
  new Promise((resolve) => {
    socket.once("data", resolve);
    socket.write(payload);
  });

for (const [gapMs, count] of [
  [0, 5000],
  [2, 500],
  [5, 500],
] as const) {
  const client0 = process.cpuUsage();
  const server0 = await serverCpuMs();
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    await roundTrip();
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  const wallMs = performance.now() - started;
  const client = process.cpuUsage(client0);
  const serverUs = ((await serverCpuMs()) - server0) * 1000;
  console.log(
    `${gapMs === 0 ? "back to back" : `${gapMs} ms apart`}: ${count} round trips, ${((wallMs / count) * 1000).toFixed(0)} us each (wall); CPU per round trip: client ${((client.user + client.system) / count).toFixed(0)} us (system ${(client.system / count).toFixed(0)}), server ${(serverUs / count).toFixed(0)} us`,
  );
}
socket.destroy();
await server.stop();
