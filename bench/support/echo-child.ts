// A TCP echo server on loopback for bench/wake-cost.ts: its first IPC message is its port; then it
// answers every IPC message with its own CPU milliseconds so far.
import net from "node:net";

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  socket.on("data", (chunk) => socket.write(chunk));
});
server.listen(0, "127.0.0.1", () => process.send!((server.address() as net.AddressInfo).port));
process.on("message", () => {
  const { user, system } = process.cpuUsage();
  process.send!({ cpuMs: (user + system) / 1000 });
});
process.once("SIGTERM", () => process.exit(0));
