import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { freePort } from "../support/free-port.ts";
import { deletePrefixAt } from "../support/redis-keys.ts";
import { testPrefix } from "../support/run-scope.ts";
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";

// `pnpm demo:webhooks` as a newcomer runs it: its receiver, the service it starts on loopback, the
// sample task's webhook printed and verified; then what a receiver must survive (a body that is no
// task, a forged task id, a repeat). The receiver needs :443 (root, as in CI).
const SCRIPT = path.join(import.meta.dirname, "../../scripts/demo-webhooks.mjs");
const HOST = "receiver.webhooks-demo.example";
const canRun = process.getuid?.() === 0;
const maybe = canRun ? describe : describe.skip;
if (!canRun) console.warn("demo-webhooks: skipped, the receiver needs :443 (root)");

let demo: ChildProcess | undefined;
let output = "";
let database: ScratchDatabase | undefined;
let env: NodeJS.ProcessEnv;
let base = "";

async function printed(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = output.match(pattern);
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`not printed: ${pattern}\n--- output ---\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function postToReceiver(address: string, ca: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: address, port: 443, servername: HOST, path: "/hooks", method: "POST", ca, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

maybe("pnpm demo:webhooks", () => {
  beforeAll(async () => {
    database = await createScratchDatabase();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      ...process.env,
      NODE_OPTIONS: "",
      DATABASE_URL: database.url,
      PORT: String(port),
      BASE_URL: base,
      QUEUE_PREFIX: testPrefix("demo"),
      STORAGE_DIR: mkdtempSync(path.join(os.tmpdir(), "gen-demo-storage-")),
      DEMO_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), "gen-demo-state-")),
      GATEWAY_METRICS_PORT: "0",
      WORKER_METRICS_PORT: "0",
      UPSTREAM_SIM_PORT: String(await freePort()),
    };
    delete env.UPSTREAM_URL;
    delete env.MODEL_CATALOG;
    delete env.WEBHOOK_ALLOWED_CIDRS;
    delete env.DEMO_API_KEY;
    demo = spawn(process.execPath, [SCRIPT], { env, stdio: ["ignore", "pipe", "pipe"] });
    demo.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    demo.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  }, 30_000);

  afterAll(async () => {
    if (demo && demo.exitCode === null) demo.kill("SIGKILL");
    if (env?.QUEUE_PREFIX) await deletePrefixAt(env.REDIS_URL ?? "redis://127.0.0.1:6379", env.QUEUE_PREFIX);
    await database?.drop();
    for (const dir of [env?.STORAGE_DIR, env?.DEMO_STATE_DIR]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the sample task's webhook arrives through the service on loopback, printed and verified with the key", async () => {
    const [, address] = await printed(/receiver: https:\/\/receiver\.webhooks-demo\.example\/hooks on (127\.\d+\.\d+\.\d+):443/);
    // The settings it prints are the documented variables, the allow list naming that one address.
    expect(output).toContain(`WEBHOOK_ALLOWED_CIDRS=${address}/32`);
    expect(output).toContain(`NODE_EXTRA_CA_CERTS=${path.join(env.DEMO_STATE_DIR!, "ca.pem")}`);
    const [, taskId] = await printed(/submitted (task_[0-9a-f]{32}) with webhook_url https:\/\/receiver\.webhooks-demo\.example\/hooks/, 60_000);
    await printed(new RegExp(`webhook: ${taskId} completed from service-Webhook/1`));
    await printed(new RegExp(`verified: GET /api/v1/tasks/${taskId} with your key shows the same completed task`));

    // A receiver's hostile input: no task body, a forged id, a repeat of the real one.
    const ca = readFileSync(path.join(env.DEMO_STATE_DIR!, "ca.pem"), "utf8");
    await expect(postToReceiver(address!, ca, "{not json")).resolves.toBe(400);
    await printed(/webhook refused: not a task body/);
    const forged = `task_${"0".repeat(32)}`;
    await expect(postToReceiver(address!, ca, JSON.stringify({ id: forged, status: "completed" }))).resolves.toBe(200);
    await printed(new RegExp(`not verified: this key has no task ${forged}`));
    const real = output.slice(output.indexOf(`webhook: ${taskId}`));
    expect(real).toContain('"status": "completed"');
    await expect(postToReceiver(address!, ca, JSON.stringify({ id: taskId, status: "completed" }))).resolves.toBe(200);
    await printed(new RegExp(`webhook: ${taskId} completed \\(again: already handled`));

    // Ctrl-C (SIGINT) stops the receiver and the service it started.
    const exited = new Promise<number | null>((resolve) => demo!.once("exit", resolve));
    demo!.kill("SIGINT");
    await expect(exited).resolves.toBe(0);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  }, 90_000);

  test("a receiver address outside loopback is refused before anything starts", async () => {
    const child = spawn(process.execPath, [SCRIPT], { env: { ...env, DEMO_WEBHOOK_ADDRESS: "10.0.0.1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("DEMO_WEBHOOK_ADDRESS must be an IPv4 loopback address (127.0.0.0/8)");
  });
});
