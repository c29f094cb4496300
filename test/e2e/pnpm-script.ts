import { spawn, type ChildProcess } from "node:child_process";
import { deletePrefixAt } from "../support/redis-keys.ts";

export interface PnpmScript {
  /** pnpm's process, the leader of the group. */
  child: ChildProcess;
  /** Kills the script's whole process group and removes its queue prefix's keys. */
  stop(): Promise<void>;
}

/**
 * `pnpm <script>` exactly as the README documents it, in a process group of its own as a terminal
 * session would run it; resolves once `readyUrl` answers 2xx (20 s at most).
 */
export async function startPnpmScript(script: string, env: NodeJS.ProcessEnv, readyUrl: string): Promise<PnpmScript> {
  const service: ChildProcess = spawn("pnpm", [script], { env, detached: true, stdio: ["ignore", "ignore", "inherit"] });
  const handle: PnpmScript = {
    child: service,
    async stop() {
      try {
        process.kill(-service.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
      if (env.QUEUE_PREFIX) await deletePrefixAt(env.REDIS_URL ?? "redis://127.0.0.1:6379", env.QUEUE_PREFIX);
    },
  };
  for (let i = 0; i < 200; i++) {
    const ready = await fetch(readyUrl).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return handle;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await handle.stop();
  throw new Error(`pnpm ${script} did not become ready at ${readyUrl}`);
}
