import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "../support/free-port.ts";
import { testPrefix } from "../support/run-scope.ts";
import { startPnpmScript, type PnpmScript } from "./pnpm-script.ts";

const run = promisify(execFile);
let service: PnpmScript | undefined;
let base = "";
let env: NodeJS.ProcessEnv;
let metricsBase = "";

beforeAll(async () => {
  const port = await freePort();
  const metricsPort = await freePort();
  const upstreamSimPort = await freePort();
  base = `http://127.0.0.1:${port}`;
  metricsBase = `http://127.0.0.1:${metricsPort}`;
  env = {
    ...process.env,
    NODE_OPTIONS: "",
    PORT: String(port),
    BASE_URL: base,
    QUEUE_PREFIX: testPrefix("start"),
    STORAGE_DIR: mkdtempSync(path.join(os.tmpdir(), "gen-start-")),
    LOG_LEVEL: "warn",
    GATEWAY_METRICS_PORT: String(metricsPort),
    WORKER_METRICS_PORT: "0",
    // The shipped catalog's "http" model needs the upstream simulator, which pnpm start runs here.
    UPSTREAM_SIM_PORT: String(upstreamSimPort),
  };
  delete env.UPSTREAM_URL;
  delete env.MODEL_CATALOG;
  service = await startPnpmScript("start", env, `${base}/readyz`);
}, 40_000);

afterAll(() => service?.stop());

const BODIES: [string, Record<string, unknown>, string | null][] = [
  ["/api/v1/images/generations", { model: "sim-image-1", prompt: "a lighthouse", size: "256x256" }, "image_urls"],
  ["/api/v1/videos/generations", { model: "sim-video-1", prompt: "waves", duration_seconds: 1 }, "video_urls"],
  ["/api/v1/audio/generations", { model: "sim-audio-1", prompt: "rain", duration_seconds: 1 }, "audio_urls"],
  ["/api/v1/detect", { model: "sim-detect-1", text: "Is this machine written?" }, null],
  ["/api/v1/humanize", { model: "sim-humanize-1", text: "It is imperative to note." }, null],
  ["/api/v1/essay", { model: "sim-essay-1", prompt: "On bridges", max_words: 80 }, null],
  ["/api/v1/moderations", { model: "sim-moderation-1", input: "hello" }, null],
  ["/api/v1/images/generations", { model: "sim-image-1-tokens", prompt: "a lighthouse", size: "256x256" }, "image_urls"],
  ["/api/v1/images/generations", { model: "upstream-image-1", prompt: "a lighthouse" }, "image_urls"],
];

test("the bodies below cover every model of the shipped catalog", () => {
  const shipped = JSON.parse(readFileSync(path.join(import.meta.dirname, "../../packages/catalog/models.json"), "utf8")) as { models: { id: string }[] };
  expect(BODIES.map(([, body]) => body.model).sort()).toEqual(shipped.models.map((m) => m.id).sort());
});

test("pnpm start + pnpm admin: every model of the shipped catalog completes (the http one through the upstream simulator pnpm start runs) and media is served", async () => {
  const { stdout } = await run("pnpm", ["admin", "create-key", "--credits", "10000"], { env });
  const auth = `Bearer ${JSON.parse(stdout).api_key}`;
  for (const [endpoint, body, field] of BODIES) {
    const submitted = await fetch(`${base}${endpoint}`, {
      method: "POST",
      headers: { Authorization: auth, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(submitted.status).toBe(202);
    const location = submitted.headers.get("location")!;
    let task: any;
    // A bound for a loaded machine, not a speed check: pnpm start brings the worker up after the
    // gateway answers, and the first tasks pay the worker's cold start (about 0.15 s each when idle).
    const deadline = Date.now() + 30_000;
    for (;;) {
      task = await (await fetch(`${base}${location}`, { headers: { Authorization: auth } })).json();
      if (task.status === "completed" || task.status === "failed" || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect({ model: body.model, status: task.status }).toEqual({ model: body.model, status: "completed" });
    if (field) {
      for (const url of task.output[field]) {
        expect(url.startsWith(`${base}/cdn/`)).toBe(true);
        expect((await fetch(url)).status).toBe(200);
      }
    }
  }
}, 120_000);

test("the gateway's metrics are on GATEWAY_METRICS_PORT, not on the public API port", async () => {
  const scraped = await fetch(`${metricsBase}/metrics`);
  expect(scraped.status).toBe(200);
  expect(await scraped.text()).toContain("http_requests_total");
  const publicPort = await fetch(`${base}/metrics`);
  expect(publicPort.status).toBe(404);
  expect(((await publicPort.json()) as { error: { code: number } }).error.code).toBe(40002);
});

test("SIGTERM stops gateway, worker and upstream simulator within a bounded time", async () => {
  const started = Date.now();
  const exited = new Promise<number | null>((resolve) => service!.child.once("exit", (code) => resolve(code)));
  process.kill(-service!.child.pid!, "SIGTERM");
  await exited;
  expect(Date.now() - started).toBeLessThan(20_000);
  await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  await expect(fetch(`http://127.0.0.1:${env.UPSTREAM_SIM_PORT}/healthz`)).rejects.toThrow();
}, 30_000);

test.each([
  ["PostgreSQL", { DATABASE_URL: "postgresql://postgres@127.0.0.1:1/gen" }, /^gateway: PostgreSQL does not answer at 127\.0\.0\.1:1\/gen \(DATABASE_URL\)/],
  ["Redis", { REDIS_URL: "redis://127.0.0.1:1" }, /^gateway: Redis does not answer at 127\.0\.0\.1:1 \(REDIS_URL\)/],
])(
  "pnpm start without %s fails with one clear line",
  async (_name, broken, pattern) => {
    const result = await run("pnpm", ["start"], { env: { ...env, ...broken } }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
  },
  30_000,
);
