// `pnpm start` / `start:gateway` / `start:worker` / `start:console`: runs the compiled apps
// (apps/<app>/dist/main.js, from `pnpm build`, which scripts/setup.sh runs) with plain node. With
// "all", the gateway starts first: if it cannot reach PostgreSQL or Redis it prints one line and
// exits, and nothing else is started. Signals are forwarded so SIGTERM drains every app. "all" serves
// the console at /console on the gateway's port; "console" runs it alone on CONSOLE_PORT
// (docs/operations/console.md: keeping the console off the public listener). One process per app (with
// GATEWAY_PROCESSES above 1 the gateway is a supervisor that reports ready once its children listen): in
// production (docker/Dockerfile) node runs main.js directly and receives the signals itself.
//
// "all" also runs the upstream simulator (apps/upstream-sim) when the catalog has a route on the
// "http" provider without an upstreamUrl of its own and UPSTREAM_URL is unset: such a route goes to
// UPSTREAM_URL's default, which nothing else serves. The simulator listens on UPSTREAM_SIM_PORT
// (8090, UPSTREAM_URL's default port) and every app is given UPSTREAM_URL pointing at it.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { ROOT, stalePackages } from "./build-state.mjs";

const role = process.argv[2] ?? "all";
const apps = role === "all" ? ["gateway", ...(needsUpstreamSim() ? ["upstream-sim"] : []), "worker"] : [role];
const env = { ...process.env };
if (apps.includes("upstream-sim") && role === "all") {
  const port = process.env.UPSTREAM_SIM_PORT || "8090";
  env.UPSTREAM_SIM_PORT = port;
  env.UPSTREAM_URL = `http://127.0.0.1:${port}`;
}
const children = new Set();
let stopping = false;

/** Whether a catalog route goes to UPSTREAM_URL's default: "http" without an upstreamUrl, UPSTREAM_URL unset. */
function needsUpstreamSim() {
  if (process.env.UPSTREAM_URL) return false;
  const file = process.env.MODEL_CATALOG || path.join(ROOT, "packages", "catalog", "models.json");
  let models;
  try {
    models = JSON.parse(readFileSync(file, "utf8")).models;
  } catch {
    return false; // The gateway reports an unreadable catalog in its own words.
  }
  if (!Array.isArray(models)) return false;
  const routes = models.flatMap((model) => [model, ...(Array.isArray(model?.fallbacks) ? model.fallbacks : [])]);
  return routes.some((route) => route?.provider === "http" && !route.upstreamUrl);
}

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
    const child = spawn(process.execPath, [path.join(ROOT, "apps", app, "dist", "main.js")], { env, stdio: ["inherit", "inherit", "inherit", "ipc"] });
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
