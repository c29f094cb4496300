import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, "../../..");
const LOOPBACK_DNS = path.join(HERE, "loopback-dns.ts");
const TAIL_LINES = 80;
// The bench sets it (package.json): it measures the apps as production runs them, `node
// dist/main.js` with nothing that compiles TypeScript inside. tsx's loader and source maps weigh
// about 80 MB of a worker's RSS. Tests run the sources, so they need no build.
const COMPILED = process.env.RUN_COMPILED_APPS === "1";

/**
 * The loopback name mapping as plain JavaScript (written once per version into the temp dir), for
 * processes that must run without a TypeScript loader: compiled apps, a deployed app.
 */
export function loopbackDnsModule(): string {
  const source = readFileSync(LOOPBACK_DNS, "utf8");
  const file = path.join(os.tmpdir(), `gen-loopback-dns-${createHash("sha256").update(source).digest("hex").slice(0, 12)}.mjs`);
  if (!existsSync(file)) {
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    });
    writeFileSync(file, outputText);
  }
  return file;
}

/** Node's arguments for an app: its sources through tsx, or its build (RUN_COMPILED_APPS=1). */
function appArguments(app: AppName): string[] {
  if (COMPILED) return ["--import", loopbackDnsModule(), `apps/${app}/dist/main.js`];
  return ["--conditions=@gen/source", "--import", "tsx", "--import", LOOPBACK_DNS, `apps/${app}/src/main.ts`];
}

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
 * One real app process, from its sources or, for the bench, its build (`pnpm start:<app>` runs the
 * same main.ts compiled to dist/; test/e2e/production-build.test.ts covers that path), plus the
 * loopback name mapping. Resolves once the app reports ready over IPC.
 */
export async function startApp(app: AppName, env: Record<string, string>, label: string = app, nodeArgs: string[] = []): Promise<AppProcess> {
  const child = spawn(process.execPath, [...nodeArgs, ...appArguments(app)], {
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
