// `pnpm start` / `start:gateway` / `start:worker` / `start:console`. Apps run as TypeScript through
// tsx (no build step). With "all", the gateway starts first: if it cannot reach PostgreSQL or Redis it
// prints one line and exits, and the worker is never started. Signals are forwarded so SIGTERM drains
// both. "all" serves the console at /console on the gateway's port; "console" runs it alone on
// CONSOLE_PORT (docs/operations.md: keeping the console off the public listener).
import { spawn } from "node:child_process";

const role = process.argv[2] ?? "all";
const apps = role === "all" ? ["gateway", "worker"] : [role];
const children = new Set();
let stopping = false;

function run(app) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", `apps/${app}/src/main.ts`], { stdio: ["inherit", "inherit", "inherit", "ipc"] });
    children.add(child);
    child.on("message", (msg) => msg && msg.ready && resolve(child));
    child.on("exit", (code, signal) => {
      children.delete(child);
      resolve(child);
      if (!stopping) stop(code ?? (signal ? 1 : 0));
    });
  });
}

function stop(code) {
  stopping = true;
  for (const child of children) child.kill("SIGTERM");
  const done = () => children.size === 0 && process.exit(code);
  for (const child of children) child.on("exit", done);
  done();
}

process.on("SIGTERM", () => stop(0));
process.on("SIGINT", () => stop(0));

for (const app of apps) {
  await run(app);
  if (stopping) break;
}
