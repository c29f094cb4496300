import { once } from "node:events";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createWebhookSender } from "@gen/webhook-sender";
import { resolverFor } from "../../packages/webhook-sender/test/helpers/fake-resolver.ts";
import { startReceiver, type Receiver } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { createTestCa, issueServerCert } from "../../packages/webhook-sender/test/helpers/test-pki.ts";
import { createUpstreamSim } from "../../apps/upstream-sim/src/create-upstream-sim.ts";
import { CALLBACK_SAFETY_POLL_MS } from "../../apps/worker/src/generation/poll-schedule.ts";
import { ledgerHolds, startStack, type Stack, type StackOptions } from "./stack.ts";
import { findTask } from "@gen/db";

// Models served by fal: submission through the gateway, the worker's fal adapter against the fal
// wire simulator (catalog upstreamUrl), outputs stored under CDN_URL, the task's webhook delivered.
// A submitted webhook_url may not name a port, so the receiver listens on RECEIVER_IP:443 (root
// only); an address of its own keeps it apart from the other suites' receivers on port 443.
const HOST = "hooks.test.example";
const RECEIVER_IP = "127.0.0.45";
const canBind443 = process.getuid?.() === 0;
if (!canBind443) console.warn(`fal e2e: the webhook delivery test is skipped, binding ${RECEIVER_IP}:443 needs root`);

let falServer: http.Server;
let falBase: string;
let stack: Stack;
let user: { userId: string; auth: string };
let receiver: Receiver | undefined;
let ca: Awaited<ReturnType<typeof createTestCa>> | undefined;

type Entry = Record<string, unknown> & { id: string };

/** The shipped catalog plus fal-served copies of its image, video and audio models. */
function falCatalog(falUrl: string): string {
  const shipped = JSON.parse(readFileSync(path.join(import.meta.dirname, "../../packages/catalog/models.json"), "utf8")) as { models: Entry[] };
  const copy = (id: string, falId: string, upstreamModel: string): Entry => {
    const entry = shipped.models.find((model) => model.id === id)!;
    return { ...entry, id: falId, provider: "fal", upstreamModel, upstreamUrl: falUrl, description: `${String(entry.description)} (fal)` };
  };
  const catalog = {
    ...shipped,
    models: [
      ...shipped.models,
      copy("upstream-image-1", "fal-image-1", "fal-ai/flux/schnell"),
      copy("sim-video-1", "fal-video-1", "fal-ai/kling-video/v2/master/image-to-video"),
      copy("sim-audio-1", "fal-audio-1", "fal-ai/stable-audio"),
    ],
  };
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "fal-catalog-")), "models.json");
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}

/** A stack serving the fal copies, with its generation worker and, as root, its webhook delivery to the receiver. */
async function startFalStack(options: StackOptions = {}): Promise<Stack> {
  const started = await startStack(
    { MODEL_CATALOG: falCatalog(`${falBase}/fal`), FAL_KEY: "e2e-key-id:e2e-key-secret", WEBHOOK_ALLOWED_CIDRS: `${RECEIVER_IP}/32` },
    options,
  );
  started.startWorker();
  if (ca)
    started.startDeliveryWorker(
      createWebhookSender({ timeoutMs: 2000, allowedCidrs: [`${RECEIVER_IP}/32`], lookup: resolverFor(HOST, [RECEIVER_IP]), ca: ca.cert }),
    );
  return started;
}

beforeAll(async () => {
  falServer = http.createServer();
  falServer.listen(0, "127.0.0.1");
  await once(falServer, "listening");
  falBase = `http://127.0.0.1:${(falServer.address() as AddressInfo).port}`;
  falServer.on("request", createUpstreamSim({ publicUrl: falBase }));
  ca = canBind443 ? await createTestCa("fal e2e CA") : undefined;
  if (ca) receiver = await startReceiver({ tls: await issueServerCert([HOST], { ca }), host: RECEIVER_IP, port: 443 });
  stack = await startFalStack();
  user = await stack.user();
});

afterAll(async () => {
  await stack?.close();
  await receiver?.close();
  falServer?.closeAllConnections();
  await new Promise((resolve) => falServer?.close(resolve));
});

afterEach(() => ledgerHolds(stack, user.userId));

const MEDIA: [string, Record<string, unknown>, string, string][] = [
  ["/api/v1/images/generations", { model: "fal-image-1", prompt: "a red fox", n: 2, size: "512x512" }, "image_urls", "image/png"],
  ["/api/v1/videos/generations", { model: "fal-video-1", prompt: "waves", duration_seconds: 1 }, "video_urls", "video/mp4"],
  ["/api/v1/audio/generations", { model: "fal-audio-1", prompt: "rain", duration_seconds: 1 }, "audio_urls", "audio/wav"],
];

describe("fal-served models end to end", () => {
  test.each(MEDIA)("%s: fal's output is stored under CDN_URL and served", async (pathname, body, field, type) => {
    const submitted = await stack.submit(user.auth, pathname, body);
    expect(submitted.status).toBe(202);
    const task = await stack.waitTerminal(user.auth, submitted.body.id);
    expect(task).toMatchObject({ status: "completed", error: null });
    const urls: string[] = task.output[field];
    expect(urls.length).toBe(field === "image_urls" ? 2 : 1);
    for (const url of urls) {
      expect(url.startsWith(`${stack.config.cdnUrl}/`)).toBe(true);
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain(type);
    }
    // The route and fal's request, recorded for a worker taking over after a crash and for the console.
    const row = (await findTask(stack.gateway.db, submitted.body.id))!;
    expect(row.upstreamProvider).toBe("fal");
    expect(row.upstreamId).toMatch(new RegExp(`^${row.upstreamModel}/requests/[0-9a-f-]{36}$`));
  });

  test("a 429 with Retry-After at submit is waited out and the task completes", async () => {
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "fal-image-1", prompt: "busy [[up:submit_429=1]]" });
    expect(await stack.waitTerminal(user.auth, submitted.body.id)).toMatchObject({ status: "completed" });
  });

  test.each([
    ["[[up:reject]]", 80007],
    ["[[up:policy_input]]", 80006],
    ["[[up:policy_output]]", 80006],
    ["[[up:fail]]", 80003],
  ])("%s fails the task with %d, fal's cause kept for the operator only", async (directive, code) => {
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "fal-image-1", prompt: `a cat ${directive}` });
    const task = await stack.waitTerminal(user.auth, submitted.body.id);
    expect(task).toMatchObject({ status: "failed", error: { code } });
    expect(JSON.stringify(task)).not.toContain("Simulated");
    const row = (await findTask(stack.gateway.db, submitted.body.id))!;
    expect(row.failureCause).toMatchObject({ provider: "fal", upstreamModel: "fal-ai/flux/schnell", status: expect.any(Number), message: expect.any(String) });
  });

  (canBind443 ? test : test.skip)("the task's webhook carries exactly the GET body of the fal-served task", async () => {
    const url = `https://${HOST}/hooks/fal?k=v`;
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "fal-image-1", prompt: "a kite", webhook_url: url });
    await stack.waitTerminal(user.auth, submitted.body.id);
    const deadline = Date.now() + 15_000;
    const delivered = () => receiver!.requests.find((r) => r.body.toString("utf8").includes(submitted.body.id));
    while (!delivered() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const polled = await fetch(`${stack.baseUrl}/api/v1/tasks/${submitted.body.id}`, { headers: { Authorization: user.auth } });
    expect(delivered()?.body.toString("utf8")).toBe(await polled.text());
  });
});

// With UPSTREAM_CALLBACK_URL set to the stack's own gateway, fal requests are submitted with
// fal's `webhookUrl`, and the simulator's webhook wakes the task.
describe("fal-served models end to end, woken by fal's webhook", () => {
  let callbackStack: Stack;
  let callbackUser: { userId: string; auth: string };
  beforeAll(async () => {
    callbackStack = await startFalStack({ upstreamCallbacks: true });
    callbackUser = await callbackStack.user();
  });
  afterAll(async () => {
    await callbackStack?.close();
  });

  (canBind443 ? test : test.skip)(
    "a 2-s request completes on its webhook, long before the safety poll, and the client's webhook is the GET body",
    async () => {
      const url = `https://${HOST}/hooks/fal-callback`;
      const submitted = await callbackStack.submit(callbackUser.auth, "/api/v1/images/generations", {
        model: "fal-image-1",
        prompt: "a kite at dusk [[up:delay_ms=2000]]",
        webhook_url: url,
      });
      expect(submitted.status).toBe(202);
      // With a callback expected the worker's first poll comes only after CALLBACK_SAFETY_POLL_MS
      // (a minute): a task done within half of it was woken by the callback, not found by a poll.
      const task = await callbackStack.waitTerminal(callbackUser.auth, submitted.body.id, CALLBACK_SAFETY_POLL_MS / 2);
      expect(task).toMatchObject({ status: "completed", error: null });
      const row = (await findTask(callbackStack.gateway.db, submitted.body.id))!;
      expect(row).toMatchObject({ upstreamProvider: "fal", upstreamCallback: true });
      for (const output of task.output.image_urls as string[]) {
        expect(output.startsWith(`${callbackStack.config.cdnUrl}/`)).toBe(true);
        expect((await fetch(output)).headers.get("content-type")).toContain("image/png");
      }
      const deadline = Date.now() + 15_000;
      const delivered = () => receiver!.requests.find((r) => r.body.toString("utf8").includes(submitted.body.id));
      while (!delivered() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      const polled = await fetch(`${callbackStack.baseUrl}/api/v1/tasks/${submitted.body.id}`, { headers: { Authorization: callbackUser.auth } });
      expect(delivered()?.body.toString("utf8")).toBe(await polled.text());
      await ledgerHolds(callbackStack, callbackUser.userId);
    },
    40_000,
  );
});
