import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parse } from "yaml";
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
  const targets = [...compose.matchAll(/target:\s*([\w-]+)/g)].map((m) => m[1]);
  expect([...new Set(targets)].sort()).toEqual(["gateway", "tools", "upstream-sim", "worker"]);
  for (const target of targets) expect(stages().has(target!)).toBe(true);
  expect([...stages().keys()].pop()).toBe("gateway");
  expect(compose).not.toMatch(/command:\s*\[\s*"(pnpm|npm)"/);
});

test.each(["gateway", "worker", "upstream-sim"])("the %s image: its production directory, user node, node as PID 1, a health check", (app) => {
  const lines = chain(app);
  expect(stages().get("build")!.lines.join("\n")).toContain(`bash scripts/deploy-app.sh ${app} /prod/${app}`);
  expect(lines).toContain(`COPY --from=build /prod/${app} /app`);
  expect(last(lines, "USER")).toBe("USER node");
  expect(last(lines, "WORKDIR")).toBe("WORKDIR /app");
  expect(last(lines, "CMD")).toBe('CMD ["node", "dist/main.js"]');
  expect(lines.some((line) => line.startsWith("ENTRYPOINT"))).toBe(false);
  expect(last(lines, "HEALTHCHECK")).toMatch(new RegExp(`CMD \\["node", "/healthcheck.mjs", "${app}"\\]$`));
  // Nothing of the build's toolchain: the runtime stages start from the plain node image.
  // Node 22 LTS in the images (the code still runs on 20: package.json engines, the CI machines).
  expect(stages().get("runtime")!.from).toBe("node:22-bookworm-slim");
  expect(stages().get("build")!.from).toBe("node:22-bookworm-slim");
  expect(lines.join("\n")).not.toMatch(/pnpm|npm install/);
});

interface ComposeService {
  build?: { target: string };
  image?: string;
  restart?: string;
  environment?: Record<string, string>;
  ports?: string[];
  networks?: Record<string, { ipv4_address?: string }>;
  depends_on?: Record<string, { condition: string }>;
  profiles?: string[];
}

describe("docker/compose.yaml", () => {
  // Parsed as Docker reads it (anchors and merge keys resolved): `docker compose config` is not on these machines.
  const file = parse(compose, { merge: true }) as {
    services: Record<string, ComposeService>;
    networks: Record<string, { ipam: { config: { subnet: string }[] } }>;
  };
  const services = file.services;

  test("every long-running service restarts unless stopped; the migration runs once", () => {
    for (const [name, service] of Object.entries(services)) expect([name, service.restart]).toEqual([name, name === "migrate" ? "no" : "unless-stopped"]);
  });

  test("the API on :8080, the metrics of the gateway (9090) and the worker (9091) on the host's loopback", () => {
    expect(services.gateway!.ports).toEqual(["8080:8080", "127.0.0.1:9090:9090"]);
    expect(services.worker!.ports).toEqual(["127.0.0.1:9091:9091"]);
    expect(services["upstream-sim"]!.ports).toBeUndefined();
  });

  test("every shipped model runs: simulated ones in the worker, the http one on the upstream simulator it names", () => {
    const catalog = JSON.parse(readFileSync(path.join(ROOT, "packages/catalog/models.json"), "utf8")) as {
      models: { id: string; provider: string; upstreamUrl?: string; fallbacks?: { provider: string; upstreamUrl?: string }[] }[];
    };
    const routes = catalog.models.flatMap((model) => [model, ...(model.fallbacks ?? [])]);
    // No credentials in compose: every route is the simulated provider or the http protocol.
    expect([...new Set(routes.map((route) => route.provider))].sort()).toEqual(["http", "simulated"]);
    const sim = services["upstream-sim"]!;
    expect(sim.build!.target).toBe("upstream-sim");
    const address = sim.networks!.default!.ipv4_address!;
    for (const app of ["gateway", "worker", "migrate", "console"]) {
      const env = services[app]!.environment!;
      expect([app, env.UPSTREAM_URL]).toEqual([app, `http://${address}:8090`]);
      // The default allow list is UPSTREAM_URL's address: the simulator's files load, nothing else private does.
      expect(env.UPSTREAM_ALLOWED_CIDRS).toBeUndefined();
      expect(env.DATABASE_URL).toBe("postgresql://postgres@postgres:5432/gen");
    }
    expect(sim.environment!.UPSTREAM_SIM_PUBLIC_URL).toBe(`http://${address}:8090`);
    // The fixed address is inside the network compose creates.
    const [subnet, bits] = file.networks.default!.ipam.config[0]!.subnet.split("/");
    expect(bits).toBe("24");
    expect(address.split(".").slice(0, 3)).toEqual(subnet!.split(".").slice(0, 3));
    expect(services.worker!.depends_on!["upstream-sim"]).toEqual({ condition: "service_healthy" });
  });

  test("the upstream simulator's image listens on its network, on the port compose points at", () => {
    const lines = chain("upstream-sim");
    expect(lines).toContain("ENV UPSTREAM_SIM_HOST=0.0.0.0 UPSTREAM_SIM_PORT=8090");
    expect(lines).toContain("EXPOSE 8090");
  });
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
    // The simulator has no health route: any answer (here 404) means it serves; nothing listening does not.
    expect(await check("upstream-sim", { UPSTREAM_SIM_PORT: String(port) })).toBe(0);
    expect(await check("upstream-sim", { UPSTREAM_SIM_PORT: String(await closedPort()) })).toBe(1);
    expect(await check("console", {})).toBe(2);
  });
});
