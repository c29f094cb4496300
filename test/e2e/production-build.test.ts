import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createDatabase, type Database } from "@gen/db";
import { createUser } from "../../apps/gateway/test/support/test-gateway.ts";
import { closedPort } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { loopbackDnsModule } from "../faults/support/app-process.ts";
import { canBind443, startHookReceiver, type HookReceiver } from "../faults/support/hook-receiver.ts";
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { deletePrefixAt } from "../support/redis-keys.ts";
import { testPrefix } from "../support/run-scope.ts";

// The production directories exactly as docker/Dockerfile builds them (scripts/deploy-app.sh after
// `pnpm build`), checked for what they must not hold, then the gateway and the worker run from
// them with plain `node dist/main.js` against the real PostgreSQL (a scratch database) and Redis
// (a prefix of their own): submit → generation → webhook to a loopback receiver → poll → SIGTERM.
const run = promisify(execFile);
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
// Root devDependencies, and what tests and builds use: none may reach a production directory.
const DEV_ONLY = [
  "typescript",
  "tsx",
  "jest",
  "@swc/core",
  "@swc/jest",
  "eslint",
  "prisma",
  "supertest",
  "playwright-core",
  "autocannon",
  "esbuild-register",
  "@types/jest",
  // Prisma is the schema, migration and type-generation tool: no app builds its client.
  "@prisma/client",
  "@prisma/adapter-pg",
];

interface App {
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

let tmp = "";
let database: ScratchDatabase;
let db: Database;
let receiver: HookReceiver | undefined;
let env: Record<string, string>;
const apps: Record<string, App> = {};

/** The directory names under node_modules/.pnpm, as `name@version...` with `/` as `+`. */
function installedPackages(dir: string): string[] {
  return readdirSync(path.join(dir, "node_modules/.pnpm")).filter((name) => name !== "node_modules" && !name.startsWith("lock"));
}

async function startApp(name: "gateway" | "worker"): Promise<App> {
  // The test's name mapping (names → loopback, never real DNS) as plain JavaScript: nothing that
  // compiles TypeScript may run inside the production processes.
  const child = spawn(process.execPath, ["--import", loopbackDnsModule(), "dist/main.js"], {
    cwd: path.join(tmp, name),
    env,
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const output: string[] = [];
  child.stdout!.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const app = { child, output, exited };
  apps[name] = app;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready after 30 s:\n${output.join("")}`)), 30_000);
    child.once("message", () => {
      clearTimeout(timer);
      resolve();
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before ready:\n${output.join("")}`));
    });
  });
  return app;
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "gen-production-"));
  // Sequential: two pnpm deploys at once would share the store's temporary files.
  for (const app of ["gateway", "worker"])
    await run("bash", ["scripts/deploy-app.sh", app, path.join(tmp, app)], { cwd: REPO_ROOT, env: { ...process.env, NODE_OPTIONS: "" } });

  database = await createScratchDatabase();
  db = createDatabase(database.url);
  if (canBind443) receiver = await startHookReceiver();
  else console.warn("production-build: webhook leg skipped, the receiver needs :443 (root)");
  const port = await closedPort();
  env = {
    PATH: process.env.PATH ?? "",
    NODE_ENV: "production",
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    QUEUE_PREFIX: testPrefix("prod"),
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    STORAGE_DIR: path.join(tmp, "storage"),
    GATEWAY_METRICS_PORT: "0",
    WORKER_METRICS_PORT: "0",
    LOG_LEVEL: "warn",
    ...receiver?.childEnv,
  };
}, 120_000);

afterAll(async () => {
  for (const app of Object.values(apps)) if (app.child.exitCode === null && app.child.signalCode === null) app.child.kill("SIGKILL");
  await Promise.all(Object.values(apps).map((app) => app.exited));
  await db?.$disconnect();
  await database?.drop();
  await receiver?.close();
  if (env) await deletePrefixAt(env.REDIS_URL!, env.QUEUE_PREFIX!);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test.each(["gateway", "worker"])("the %s's production directory holds compiled code and production dependencies only", (app) => {
  const dir = path.join(tmp, app);
  expect(existsSync(path.join(dir, "dist/main.js"))).toBe(true);
  expect(existsSync(path.join(dir, "src"))).toBe(false);
  const installed = installedPackages(dir);
  const present = DEV_ONLY.filter(
    (name) => existsSync(path.join(dir, "node_modules", name)) || installed.some((entry) => entry.startsWith(`${name.replace("/", "+")}@`)),
  );
  expect(present).toEqual([]);
  // Workspace packages arrive as their package.json "files": compiled dist/, no TypeScript.
  const own = readdirSync(path.join(dir, "node_modules/@gen"));
  expect(own.length).toBeGreaterThan(5);
  for (const name of own) {
    const pkg = path.join(dir, "node_modules/@gen", name);
    expect({ name, dist: existsSync(path.join(pkg, "dist/index.js")), src: existsSync(path.join(pkg, "src")) }).toEqual({ name, dist: true, src: false });
  }
  // @gen/db is the pg pool and Kysely; of Prisma's output it carries only the row types.
  expect(existsSync(path.join(dir, "node_modules/@gen/db/dist/generated/kysely-types.js"))).toBe(true);
  expect(existsSync(path.join(dir, "node_modules/@gen/db/dist/generated/client.js"))).toBe(false);
});

test("gateway and worker run from it with node: submit, generation, webhook, poll, then SIGTERM", async () => {
  await startApp("gateway");
  await startApp("worker");
  const user = await createUser(db, 1000);
  const headers = { Authorization: user.auth, "Content-Type": "application/json" };
  const body = { model: "sim-image-1", prompt: "a lighthouse", size: "256x256", ...(receiver ? { webhook_url: receiver.url } : {}) };
  const submitted = await fetch(`${env.BASE_URL}/api/v1/images/generations`, { method: "POST", headers, body: JSON.stringify(body) });
  expect(submitted.status).toBe(202);
  const { id } = (await submitted.json()) as { id: string };

  let task: any;
  for (let i = 0; i < 300; i++) {
    task = await (await fetch(`${env.BASE_URL}/api/v1/tasks/${id}?include=webhook`, { headers })).json();
    const settled = task.status === "completed" && (!receiver || task.webhook?.status === "delivered");
    if (settled || task.status === "failed") break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(task.status).toBe("completed");
  const media = await fetch(task.output.image_urls[0]);
  expect(media.status).toBe(200);
  if (receiver) {
    expect(task.webhook).toMatchObject({ status: "delivered", attempts: 1, response_status: 200 });
    expect(receiver.posts.get(id)).toHaveLength(1);
  }

  // node itself receives SIGTERM (no wrapper in between, as in the image) and both drain and exit.
  const started = Date.now();
  for (const app of Object.values(apps)) app.child.kill("SIGTERM");
  const codes = await Promise.all(Object.values(apps).map((app) => app.exited));
  expect(codes).toEqual([0, 0]);
  expect(Date.now() - started).toBeLessThan(20_000);
}, 60_000);
