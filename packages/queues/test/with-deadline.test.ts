import { spawn } from "node:child_process";
import net from "node:net";
import { withDeadline } from "../src/index.ts";

// A process stalled past the deadline (a busy CPU) must still take an answer that arrived in time:
// the timer fires first after the stall, before the loop reads the socket.
test("an answer that arrived while this process was stalled past the deadline wins over the deadline", async () => {
  // The echo in a process of its own: it answers while this one is stalled.
  const echo = spawn(process.execPath, [
    "-e",
    `const s = require("node:net").createServer((c) => c.on("data", (d) => c.write(d))); s.listen(0, "127.0.0.1", () => console.log(s.address().port));`,
  ]);
  const port = await new Promise<number>((resolve) => echo.stdout.once("data", (data: Buffer) => resolve(Number(data.toString("utf8").trim()))));
  const client = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve) => client.once("connect", resolve));
  try {
    const echoed = new Promise<string>((resolve) => client.once("data", (data) => resolve(data.toString("utf8"))));
    const answer = withDeadline(echoed, 20, "echo");
    client.write("ping");
    // Stalled well past the deadline; the echo is in the socket's buffer long before this ends.
    const until = Date.now() + 300;
    while (Date.now() < until);
    await expect(answer).resolves.toBe("ping");
  } finally {
    client.destroy();
    echo.kill();
  }
});

test("no answer: rejects after the deadline, naming what was waited for", async () => {
  await expect(withDeadline(new Promise<never>(() => undefined), 20, "rate limiter")).rejects.toThrow("rate limiter: no answer within 20 ms");
});
