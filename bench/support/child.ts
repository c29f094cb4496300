import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const LOOPBACK_DNS = path.join(REPO_ROOT, "test/faults/support/loopback-dns.ts");

/** A TypeScript script in its own process (so it never shares an event loop with the load), ready on its first IPC message. */
export async function startChild(
  script: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; message: Promise<unknown>; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ["--conditions=@gen/source", "--import", "tsx", "--import", LOOPBACK_DNS, script], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, NODE_OPTIONS: "" },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const first = new Promise<unknown>((resolve, reject) => {
    child.once("message", resolve);
    child.once("exit", (code) => reject(new Error(`${script} exited (${code}) before its first message`)));
  });
  return {
    child,
    message: first,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Resident set size of a process, from /proc (Linux). */
export async function rssBytes(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}
