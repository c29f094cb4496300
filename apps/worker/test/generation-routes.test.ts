import { createCatalog, type Route } from "@gen/catalog";
import { loadConfig } from "@gen/config";
import { createDatabase } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { createLogger } from "@gen/logger";
import { PolicyViolation, ProviderUnavailableError, UpstreamRejection, type Provider, type ProviderJob, type ProviderResult } from "@gen/providers";
import { createDownloadGuard } from "@gen/storage";
import type { GenerationDeps } from "../src/generation/generation-deps.ts";
import { generationStep } from "../src/generation/process-generation.ts";
import { insertRow, insertUser, readRow } from "../../../test/support/db-rows.ts";

// The submit across a model's routes (primary, then fallbacks), the waits a provider asks for,
// the outage budget, and the operator-side cause; providers are scripted per route.
const db = createDatabase(process.env.DATABASE_URL!);
const userId = newUserId();
beforeAll(() => insertUser(db, userId, 1000));
afterAll(() => db.$disconnect());

const catalog = createCatalog({
  models: [
    {
      id: "routed-image",
      endpoint: "images",
      provider: "replicate",
      upstreamModel: "acme/painter",
      moderationRefund: { output: 0 },
      pricing: { method: "flat", credits: 1 },
    },
    {
      id: "routed-detect",
      endpoint: "detect",
      provider: "replicate",
      upstreamModel: "acme/detector",
      moderationRefund: { output: 0 },
      pricing: { method: "flat", credits: 1 },
      fallbacks: [
        { provider: "fal", upstreamModel: "fal-ai/detector" },
        { provider: "openai", upstreamModel: "gpt-detector" },
      ],
      upstreamInput: { temperature: 0 },
      upstreamInputMap: { text: "input_text" },
    },
  ],
});

type Script = {
  submit?: (job: ProviderJob) => Promise<{ upstreamId: string; result?: ProviderResult }>;
  poll?: (id: string) => Promise<ProviderResult>;
};

/** One scripted provider per kind; `calls` records every request in order. */
function routes(scripts: Partial<Record<Route["provider"], Script>>) {
  const calls: string[] = [];
  const jobs: ProviderJob[] = [];
  const providers = new Map<string, Provider>();
  for (const [kind, script] of Object.entries(scripts)) {
    providers.set(kind, {
      submit: async (job) => {
        calls.push(`submit ${kind} ${job.upstreamModel}`);
        jobs.push(job);
        if (!script.submit) throw new Error("unexpected submit");
        return script.submit(job);
      },
      poll: async (id) => {
        calls.push(`poll ${kind} ${id}`);
        return script.poll ? script.poll(id) : { state: "running" };
      },
      cancel: async (id) => void calls.push(`cancel ${kind} ${id}`),
    });
  }
  return { calls, jobs, registry: (route: Route) => providers.get(route.provider) ?? unexpected(route) };
}

function unexpected(route: Route): Provider {
  throw new Error(`no provider scripted for ${route.provider}`);
}

function deps(registry: (route: Route) => Provider, env: Record<string, string> = {}, extra: Partial<GenerationDeps> = {}): GenerationDeps {
  return {
    config: loadConfig({ DATABASE_URL: process.env.DATABASE_URL, ...env }),
    db,
    catalog,
    providers: registry,
    logger: createLogger("worker-test", "silent"),
    ...extra,
  } as unknown as GenerationDeps;
}

async function task(data: Record<string, unknown> = {}) {
  const id = newTaskId();
  await insertRow(db, "tasks", {
    id,
    userId,
    endpoint: "detect",
    model: "routed-detect",
    input: { text: "is this written by a machine?" },
    requestId: "req_x",
    billingMethod: "flat",
    reservedCredits: 1,
    status: "queued",
    ...data,
  });
  await insertRow(db, "ledger_entries", { userId, taskId: id, kind: "reserve", amount: 1, delta: -1 });
  return id;
}

const row = (id: string) => readRow(db, "tasks", { id });
const done: ProviderResult = { state: "completed", data: { ai_probability: 0.9, label: "ai" } };
const outage = (status: number) => new ProviderUnavailableError(`HTTP ${status}`, { upstream: { status, message: "overloaded", requestId: "rq-1" } });
const quota = (retryAfterMs?: number) =>
  new ProviderUnavailableError("HTTP 429", { upstream: { status: 429, message: "rate limited" }, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });

test("the primary takes the job: recorded with its route, mapped input passed, polled on that route", async () => {
  const { calls, jobs, registry } = routes({ replicate: { submit: async () => ({ upstreamId: "r-1" }), poll: async () => done } });
  const id = await task();
  expect(await generationStep(deps(registry), id)).toBeUndefined();
  expect(calls).toEqual(["submit replicate acme/detector", "poll replicate r-1"]);
  expect(jobs[0]).toMatchObject({ upstreamModel: "acme/detector", inputMap: { text: "input_text" }, constantInput: { temperature: 0 } });
  expect(await row(id)).toMatchObject({
    status: "completed",
    upstreamProvider: "replicate",
    upstreamModel: "acme/detector",
    upstreamId: "r-1",
    failureCause: null,
  });
});

test("a 5xx, a 429 and a network error each move the submit to the next route, in order", async () => {
  const { calls, registry } = routes({
    replicate: { submit: async () => Promise.reject(outage(503)) },
    fal: { submit: async () => Promise.reject(quota(5000)) },
    openai: { submit: async () => ({ upstreamId: "o-1" }), poll: async () => done },
  });
  const id = await task();
  expect(await generationStep(deps(registry), id)).toBeUndefined();
  expect(calls).toEqual(["submit replicate acme/detector", "submit fal fal-ai/detector", "submit openai gpt-detector", "poll openai o-1"]);
  expect(await row(id)).toMatchObject({ status: "completed", upstreamProvider: "openai", upstreamModel: "gpt-detector" });
});

test("a synchronous API's result is taken at once, without a poll", async () => {
  const { calls, registry } = routes({ replicate: { submit: async () => ({ upstreamId: "sync-1", result: done }) } });
  const id = await task();
  expect(await generationStep(deps(registry), id)).toBeUndefined();
  expect(calls).toEqual(["submit replicate acme/detector"]);
  expect((await row(id)).status).toBe("completed");
});

test("a resumed task polls its recorded job on its recorded route, never submits again", async () => {
  const { calls, registry } = routes({ replicate: {}, fal: { poll: async () => done } });
  const id = await task({ status: "in_progress", startedAt: new Date(), upstreamId: "f-9", upstreamProvider: "fal", upstreamModel: "fal-ai/detector" });
  expect(await generationStep(deps(registry), id)).toBeUndefined();
  expect(calls).toEqual(["poll fal f-9"]);
});

test("every route at its quota: the step is re-run after the shortest wait asked, and the task stays open", async () => {
  const { registry } = routes({
    replicate: { submit: async () => Promise.reject(quota(4000)) },
    fal: { submit: async () => Promise.reject(quota(2000)) },
    openai: { submit: async () => Promise.reject(outage(500)) },
  });
  const id = await task();
  const before = Date.now();
  const pollAt = (await generationStep(deps(registry, { UPSTREAM_SUBMIT_RETRY_MS: "0" }), id))!.at;
  expect(pollAt).toBeGreaterThanOrEqual(before + 2000);
  expect(pollAt).toBeLessThan(Date.now() + 2100);
  expect(await row(id)).toMatchObject({ status: "in_progress", upstreamId: null });
});

test("a quota whose wait would pass the generation cap fails 80002, with the cause kept for the operator", async () => {
  const { registry } = routes({
    replicate: { submit: async () => Promise.reject(quota(60_000)) },
    fal: { submit: async () => Promise.reject(quota()) },
    openai: { submit: async () => Promise.reject(quota()) },
  });
  const id = await task({ status: "in_progress", startedAt: new Date(Date.now() - 599_500) });
  expect(await generationStep(deps(registry), id)).toBeUndefined();
  expect(await row(id)).toMatchObject({
    status: "failed",
    errorCode: 80002,
    chargedCredits: 0,
    failureCause: { step: "submit", provider: "openai", status: 429 },
  });
});

test("an outage on every route is retried within UPSTREAM_SUBMIT_RETRY_MS of the start, then fails 80001 with the cause", async () => {
  const { registry } = routes({
    replicate: { submit: async () => Promise.reject(outage(502)) },
    fal: { submit: async () => Promise.reject(outage(503)) },
    openai: {
      submit: async () =>
        Promise.reject(new ProviderUnavailableError("connect ECONNREFUSED", { upstream: { message: "connect ECONNREFUSED", code: "ECONNREFUSED" } })),
    },
  });
  const young = await task();
  const pollAt = (await generationStep(deps(registry, { UPSTREAM_SUBMIT_RETRY_MS: "30000" }), young))?.at;
  expect(pollAt).toBeGreaterThan(Date.now());
  expect((await row(young)).status).toBe("in_progress");

  const old = await task({ status: "in_progress", startedAt: new Date(Date.now() - 31_000) });
  expect(await generationStep(deps(registry, { UPSTREAM_SUBMIT_RETRY_MS: "30000" }), old)).toBeUndefined();
  expect(await row(old)).toMatchObject({
    status: "failed",
    errorCode: 80001,
    chargedCredits: 0,
    failureCause: { step: "submit", provider: "openai", upstreamModel: "gpt-detector", message: "connect ECONNREFUSED", code: "ECONNREFUSED" },
  });
});

test.each([
  [
    "invalid input",
    new UpstreamRejection(80007, { status: 400, message: "input_text too long", requestId: "rq-7" }),
    80007,
    { status: 400, message: "input_text too long", requestId: "rq-7" },
  ],
  [
    "a policy verdict",
    new PolicyViolation("input", "flagged", { status: 400, message: "flagged by safety" }),
    80006,
    { status: 400, message: "flagged by safety" },
  ],
])("%s at submit fails the task at once (no fallback) with its cause", async (_name, error, code, cause) => {
  const { calls, registry } = routes({ replicate: { submit: async () => Promise.reject(error) }, fal: { submit: async () => ({ upstreamId: "never" }) } });
  const id = await task();
  expect(await generationStep(deps(registry), id)).toBeUndefined();
  expect(calls).toEqual(["submit replicate acme/detector"]);
  expect(await row(id)).toMatchObject({
    status: "failed",
    errorCode: code,
    failureCause: { step: "submit", provider: "replicate", upstreamModel: "acme/detector", ...cause },
  });
});

test("a terminal failure at a poll is 80003, a completion without output 80004, each with its cause", async () => {
  const failing = routes({
    replicate: {
      submit: async () => ({ upstreamId: "r-f" }),
      poll: async () => ({ state: "failed", code: 80003, upstream: { status: 200, message: "CUDA out of memory" } }),
    },
  });
  const failed = await task();
  await generationStep(deps(failing.registry), failed);
  expect(await row(failed)).toMatchObject({
    errorCode: 80003,
    errorMessage: "Upstream returned a terminal failure",
    failureCause: { step: "poll", message: "CUDA out of memory" },
  });

  const empty = routes({ replicate: { submit: async () => ({ upstreamId: "r-e" }), poll: async () => ({ state: "completed" }) } });
  const hollow = await task();
  await generationStep(deps(empty.registry), hollow);
  expect(await row(hollow)).toMatchObject({ errorCode: 80004, failureCause: { step: "poll", provider: "replicate", message: "completed without outputs" } });
});

test("a poll answered 429 waits as long as asked before the next one", async () => {
  const { registry } = routes({ replicate: { poll: async () => Promise.reject(quota(8000)) } });
  const id = await task({ status: "in_progress", startedAt: new Date(), upstreamId: "r-q", upstreamProvider: "replicate", upstreamModel: "acme/detector" });
  const before = Date.now();
  const pollAt = (await generationStep(deps(registry), id))!.at;
  expect(pollAt).toBeGreaterThanOrEqual(before + 8000);
  expect((await row(id)).status).toBe("in_progress");
});

test("outputs that cannot be stored fail 80005 with the step and the storage or download error's code", async () => {
  const png = { data: Buffer.from("89504e470d0a1a0a", "hex"), contentType: "image/png", extension: "png" as const };
  const full = routes({ replicate: { submit: async () => ({ upstreamId: "r-s", result: { state: "completed", files: [png] } }) } });
  const storage = {
    put: async () => {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    },
  };
  const stored = await task({ endpoint: "images", model: "routed-image", input: { prompt: "a lighthouse" } });
  const warnings: { message: string; fields: Record<string, unknown> }[] = [];
  const quiet = () => {};
  const logger = {
    debug: quiet,
    info: quiet,
    error: quiet,
    warn: (message: string, fields: Record<string, unknown>) => warnings.push({ message, fields }),
    // The step logs through a child that names the task and its request.
    child: () => logger,
  };
  expect(await generationStep(deps(full.registry, {}, { storage, logger } as unknown as Partial<GenerationDeps>), stored)).toBeUndefined();
  const failed = await row(stored);
  expect(failed).toMatchObject({
    status: "failed",
    errorCode: 80005,
    failureCause: {
      step: "store",
      provider: "replicate",
      upstreamModel: "acme/painter",
      code: "ENOSPC",
      message: "storing outputs failed: ENOSPC: no space left on device, write",
    },
  });
  // The client's error is the code's own message: the cause stays on the operator's side, and in the worker's log line.
  expect(failed.errorMessage).not.toContain("ENOSPC");
  expect(warnings.find((w) => w.message === "task failed")?.fields).toMatchObject({ task_id: stored, code: 80005, cause: failed.failureCause });

  // An upstream URL the download guard refuses (loopback) fails at the download, before any write.
  const remote = routes({ replicate: { submit: async () => ({ upstreamId: "r-d", result: { state: "completed", urls: ["http://127.0.0.1:9/out.png"] } }) } });
  const guard = createDownloadGuard({ allowedCidrs: [] });
  try {
    const fetched = await task({ endpoint: "images", model: "routed-image", input: { prompt: "a lighthouse" } });
    await generationStep(deps(remote.registry, {}, { storage, downloadGuard: guard } as unknown as Partial<GenerationDeps>), fetched);
    expect(await row(fetched)).toMatchObject({ errorCode: 80005, failureCause: { step: "download", provider: "replicate" } });
  } finally {
    guard.close();
  }
});
