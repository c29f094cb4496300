import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, "../../..");
const LOOPBACK_DNS = path.join(HERE, "loopback-dns.ts");
const TAIL_LINES = 80;

export type AppName = "gateway" | "worker" | "console";

export interface AppProcess {
  name: string;
  child: ChildProcess;
  /** The last lines the process wrote (stdout and stderr), for a failure report. */
  tail(): string;
  /** Sends `signal` and waits for the exit (no-op once exited). */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * One real app process from its sources (`pnpm start:<app>` runs the same main.ts compiled to
 * dist/; test/e2e/production-build.test.ts covers that path), plus the loopback name mapping. Resolves once the app reports ready over IPC.
 */
export async function startApp(app: AppName, env: Record<string, string>, label: string = app, nodeArgs: string[] = []): Promise<AppProcess> {
  const child = spawn(process.execPath, [...nodeArgs, "--conditions=@gen/source", "--import", "tsx", "--import", LOOPBACK_DNS, `apps/${app}/src/main.ts`], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, NODE_OPTIONS: "" },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    if (lines.length > TAIL_LINES) lines.splice(0, lines.length - TAIL_LINES);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const proc: AppProcess = {
    name: label,
    child,
    tail: () => lines.map((line) => `  [${label}] ${line}`).join("\n"),
    async kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} not ready after 60 s\n${proc.tail()}`)), 60_000);
    child.once("message", () => {
      clearTimeout(timer);
      resolve();
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited before ready (${code ?? signal})\n${proc.tail()}`));
    });
  });
  return proc;
}
