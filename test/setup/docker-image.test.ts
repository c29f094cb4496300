import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { closedPort } from "../../packages/webhook-sender/test/helpers/receiver.ts";

// Docker cannot build on these machines: what the images must be is checked on the files here, and
// test/e2e/production-build.test.ts runs the directory they are made of (scripts/deploy-app.sh).
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const dockerfile = readFileSync(path.join(ROOT, "docker/Dockerfile"), "utf8");
const compose = readFileSync(path.join(ROOT, "docker/compose.yaml"), "utf8");
const run = promisify(execFile);

/** Stage name → its instructions (continuation lines joined), and the stage it starts FROM. */
function stages(): Map<string, { from: string; lines: string[] }> {
  const result = new Map<string, { from: string; lines: string[] }>();
  let current: string[] = [];
  for (const line of dockerfile.replace(/\\\n\s*/g, " ").split("\n")) {
    const from = /^FROM\s+(\S+)\s+AS\s+(\S+)/i.exec(line);
    if (from) {
      current = [];
      result.set(from[2]!, { from: from[1]!, lines: current });
    } else if (line.trim() && !line.startsWith("#")) current.push(line.trim());
  }
  return result;
}

/** The instructions a stage has, its parents' first (the last USER or CMD wins, as in Docker). */
function chain(name: string): string[] {
  const stage = stages().get(name);
  return stage ? [...chain(stage.from), ...stage.lines] : [];
}

const last = (lines: string[], instruction: string) => lines.filter((line) => line.startsWith(`${instruction} `)).pop();

test("every target compose builds is a stage of the Dockerfile, and the gateway image is the default", () => {
  const targets = [...compose.matchAll(/target:\s*(\w+)/g)].map((m) => m[1]);
  expect([...new Set(targets)].sort()).toEqual(["gateway", "tools", "worker"]);
  for (const target of targets) expect(stages().has(target!)).toBe(true);
  expect([...stages().keys()].pop()).toBe("gateway");
  expect(compose).not.toMatch(/command:\s*\[\s*"(pnpm|npm)"/);
});

test.each(["gateway", "worker"])("the %s image: its production directory, user node, node as PID 1, a health check", (app) => {
  const lines = chain(app);
  expect(stages().get("build")!.lines.join("\n")).toContain(`bash scripts/deploy-app.sh ${app} /prod/${app}`);
  expect(lines).toContain(`COPY --from=build /prod/${app} /app`);
  expect(last(lines, "USER")).toBe("USER node");
  expect(last(lines, "WORKDIR")).toBe("WORKDIR /app");
  expect(last(lines, "CMD")).toBe('CMD ["node", "dist/main.js"]');
  expect(lines.some((line) => line.startsWith("ENTRYPOINT"))).toBe(false);
  expect(last(lines, "HEALTHCHECK")).toMatch(new RegExp(`CMD \\["node", "/healthcheck.mjs", "${app}"\\]$`));
  // Nothing of the build's toolchain: the runtime stages start from the plain node image.
  expect(stages().get("runtime")!.from).toBe("node:20-bookworm-slim");
  expect(lines.join("\n")).not.toMatch(/pnpm|npm install/);
});

describe("docker/healthcheck.mjs", () => {
  let server: Server;
  let status = 200;
  let port = 0;
  beforeAll(async () => {
    server = createServer((req, res) => res.writeHead(req.url === "/healthz" || req.url === "/metrics" ? status : 404).end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const check = (role: string, env: Record<string, string>) =>
    run(process.execPath, [path.join(ROOT, "docker/healthcheck.mjs"), role], { env: { PATH: process.env.PATH ?? "", ...env } }).then(
      () => 0,
      (error: { code: number }) => error.code,
    );

  test("healthy, unhealthy and not listening", async () => {
    status = 200;
    expect(await check("gateway", { PORT: String(port) })).toBe(0);
    expect(await check("worker", { WORKER_METRICS_PORT: String(port) })).toBe(0);
    status = 503;
    expect(await check("gateway", { PORT: String(port) })).toBe(1);
    expect(await check("gateway", { PORT: String(await closedPort()) })).toBe(1);
    expect(await check("worker", { WORKER_METRICS_PORT: "0" })).toBe(0);
    expect(await check("console", {})).toBe(2);
  });
});
