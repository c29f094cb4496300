import { closedPort } from "../../../packages/webhook-sender/test/helpers/receiver.ts";
import { startApp, type AppProcess } from "./app-process.ts";
import { startFaultStack, type FaultStack, type FaultStackOptions } from "./fault-stack.ts";

interface FleetGateway {
  process: AppProcess;
  baseUrl: string;
}

export interface Fleet {
  /** The fault stack of the first gateway and the workers: its db, user(), startWorker(), workers. */
  stack: FaultStack;
  gateways: FleetGateway[];
  tails(): string;
  close(): Promise<void>;
}

/**
 * `gateways` gateway processes and `workers` worker processes on one PostgreSQL database and one
 * QUEUE_PREFIX: the fault stack, plus more gateways on ports of their own with the same
 * environment, plus more workers through the stack's startWorker().
 */
export async function startFleet(options: FaultStackOptions & { gateways: number; workers: number }): Promise<Fleet> {
  const stack = await startFaultStack(options);
  const gateways: FleetGateway[] = [{ process: stack.gateway, baseUrl: stack.baseUrl }];
  const fleet: Fleet = {
    stack,
    gateways,
    tails: () => [stack.tails(), ...gateways.slice(1).map((g) => g.process.tail())].join("\n"),
    async close() {
      await Promise.all(gateways.slice(1).map((g) => g.process.kill("SIGKILL")));
      await stack.close();
    },
  };
  try {
    for (let i = 2; i <= options.gateways; i++) {
      const port = await closedPort();
      const baseUrl = `http://127.0.0.1:${port}`;
      gateways.push({ process: await startApp("gateway", { ...stack.env, PORT: String(port), BASE_URL: baseUrl }, `gateway-${i}`), baseUrl });
    }
    while (stack.workers.length < options.workers) await stack.startWorker();
  } catch (error) {
    await fleet.close();
    throw error;
  }
  return fleet;
}
