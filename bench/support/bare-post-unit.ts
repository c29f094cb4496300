// The unit every CPU figure is also given in: the CPU one bare Express JSON POST costs its process
// (support/bare-server.ts), measured in the same run as the figures. Machines differ several-fold
// in speed; a figure in these units does not.
import { closedPort } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { startChild } from "./child.ts";
import { load } from "./load.ts";
import { CpuTally, sampleCpu } from "./proc-cpu.ts";

const CONNECTIONS = 32;

/** CPU ms of the bare Express process per POST, under the HTTP figures' load (autocannon, 32 keep-alive connections). */
export async function measureBarePostCpu(seconds = 3): Promise<number> {
  const port = await closedPort();
  const bare = await startChild("bench/support/bare-server.ts", { PORT: String(port), PROCESSES: "1" });
  await bare.message;
  const url = `http://127.0.0.1:${port}/api/v1/images/generations`;
  const post = (secs: number) =>
    load({
      url,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "sim-image-1", prompt: "a lighthouse at dusk", size: "512x512" }),
      connections: CONNECTIONS,
      seconds: secs,
    });
  try {
    await post(1);
    const tally = new CpuTally();
    const stop = sampleCpu({ bare: () => [bare.child.pid!] });
    const result = await post(seconds);
    tally.add(stop(), result.requests);
    return tally.perUnit().bare!;
  } finally {
    await bare.stop();
  }
}
