// `pnpm start` / `start:gateway` / `start:worker` / `start:console`: runs the compiled apps
// (apps/<app>/dist/main.js, from `pnpm build`, which scripts/setup.sh runs) with plain node. With
// "all", the gateway starts first: if it cannot reach PostgreSQL or Redis it prints one line and
// exits, and the worker is never started. Signals are forwarded so SIGTERM drains both. "all" serves
// the console at /console on the gateway's port; "console" runs it alone on CONSOLE_PORT
// (docs/operations.md: keeping the console off the public listener). One process per app (with
// GATEWAY_PROCESSES above 1 the gateway is a supervisor that reports ready once its children listen): in
// production (docker/Dockerfile) node runs main.js directly and receives the signals itself.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { ROOT, stalePackages } from "./build-state.mjs";

const role = process.argv[2] ?? "all";
const apps = role === "all" ? ["gateway", "worker"] : [role];
const children = new Set();
let stopping = false;

for (const app of apps) {
  if (!existsSync(path.join(ROOT, "apps", app, "dist", "main.js"))) {
    console.error(`start: apps/${app}/dist/main.js is missing; run \`pnpm build\` (scripts/setup.sh does) first`);
    process.exit(1);
  }
}
const stale = stalePackages().map((dir) => path.relative(ROOT, dir));
if (stale.length > 0) console.warn(`start: warning: sources changed since the last build (${stale.join(", ")}); \`pnpm build\` to run them`);

function run(app) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, "apps", app, "dist", "main.js")], { stdio: ["inherit", "inherit", "inherit", "ipc"] });
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
