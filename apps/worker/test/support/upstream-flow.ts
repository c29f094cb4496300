import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Worker } from "bullmq";
import { createLogger } from "@gen/logger";
import type { Provider, ProviderJob, ProviderResult, Submitted } from "@gen/providers";
import { createRedis } from "@gen/queues";
import { createDownloadGuard, createStorage } from "@gen/storage";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "../../../gateway/test/support/test-gateway.ts";
import { createGenerationWorker } from "../../src/generation/create-generation-worker.ts";
import { findTask } from "@gen/db";

/**
 * An upstream the test drives: every submit is recorded (with the callback address it was given),
 * every job runs until the test finishes it, and polls are counted. It stands for a provider's
 * API, the one edge these tests cannot run.
 */
class ScriptedUpstream implements Provider {
  readonly submits: ProviderJob[] = [];
  readonly polls = new Map<string, number>();
  readonly canceled: string[] = [];
  private readonly finished = new Set<string>();
  /** Whether jobs are created with the callback address (the provider has a webhook option). */
  takesCallbacks = false;
  /** Runs inside a submit, before it answers (a job that ends at once calls back during the step). */
  onSubmit: (job: ProviderJob, upstreamId: string) => Promise<void> = async () => {};

  async submit(job: ProviderJob): Promise<Submitted> {
    const upstreamId = `up_${job.taskId}`;
    this.submits.push(job);
    await this.onSubmit(job, upstreamId);
    return { upstreamId, ...(this.takesCallbacks && job.callbackUrl ? { callback: true } : {}) };
  }

  async poll(upstreamId: string): Promise<ProviderResult> {
    this.polls.set(upstreamId, (this.polls.get(upstreamId) ?? 0) + 1);
    if (!this.finished.has(upstreamId)) return { state: "running" };
    return { state: "completed", data: { ai_probability: 0.25, label: "human" } };
  }

  async cancel(upstreamId: string): Promise<void> {
    this.canceled.push(upstreamId);
    this.finished.add(upstreamId);
  }

  finish(taskId: string): void {
    this.finished.add(`up_${taskId}`);
  }

  /** Jobs submitted and not finished: what runs upstream now. */
  running(): string[] {
    return this.submits.map((job) => job.taskId).filter((id) => !this.finished.has(`up_${id}`));
  }

  pollsOf(taskId: string): number {
    return this.polls.get(`up_${taskId}`) ?? 0;
  }
}

export interface UpstreamFlow {
  gateway: TestGateway;
  /** The gateway's address on loopback (providers call back here). */
  baseUrl: string;
  upstream: ScriptedUpstream;
  user: TestUser;
  /** Starts one more generation worker process's worth (its own Redis connection). */
  startWorker(concurrency?: number): Worker;
  submit(model: string, text: string): Promise<string>;
  status(taskId: string): Promise<{ status: string; startedAt: Date | null; upstreamCallback: boolean; errorCode: number | null }>;
  close(): Promise<void>;
}

/** A detect model served by the scripted upstream, with the catalog fields under test. */
export function detectModel(id: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    endpoint: "detect",
    provider: "http",
    upstreamModel: id,
    contentFilter: false,
    maxPromptLength: 20000,
    pricing: { method: "flat", credits: 1 },
    moderationRefund: { output: 0 },
    ...fields,
  };
}

/**
 * A real gateway on loopback (its own QUEUE_PREFIX, the run's PostgreSQL and the shared Redis) with
 * a catalog of `models` and `env` (given the gateway's address), and generation workers on the same
 * queue whose every route is `upstream`.
 */
export async function startUpstreamFlow(
  models: Record<string, unknown>[],
  env: (baseUrl: string) => Record<string, string> = () => ({}),
): Promise<UpstreamFlow> {
  const dir = mkdtempSync(path.join(tmpdir(), "gen-flow-"));
  const catalogPath = path.join(dir, "models.json");
  writeFileSync(catalogPath, JSON.stringify({ models }));
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const gateway = await createTestGateway({ MODEL_CATALOG: catalogPath, BASE_URL: baseUrl, STORAGE_DIR: dir, ...env(baseUrl) });
  server.on("request", gateway.app);
  const upstream = new ScriptedUpstream();
  const user = await createUser(gateway.deps.db, 100_000);
  const logger = createLogger("worker-test", process.env.TEST_LOG_LEVEL ?? "silent");
  const stops: (() => Promise<void>)[] = [];
  return {
    gateway,
    baseUrl,
    upstream,
    user,
    startWorker(concurrency = 4) {
      const config = { ...gateway.deps.config, workerConcurrency: concurrency };
      const connection = createRedis(config.redis, "blocking");
      const downloadGuard = createDownloadGuard({ allowedCidrs: [] });
      const worker = createGenerationWorker(
        {
          config,
          db: gateway.deps.db,
          catalog: gateway.deps.catalog,
          providers: () => upstream,
          storage: createStorage(config),
          downloadGuard,
          webhookQueue: gateway.deps.webhookQueue,
          generationQueue: gateway.deps.generationQueue,
          logger,
        },
        connection,
      );
      stops.push(async () => {
        await worker.close(true);
        downloadGuard.close();
        connection.disconnect();
      });
      return worker;
    },
    async submit(model, text) {
      const res = await fetch(`${baseUrl}/api/v1/detect`, {
        method: "POST",
        headers: { Authorization: user.auth, "Content-Type": "application/json" },
        body: JSON.stringify({ model, text }),
      });
      const body = (await res.json()) as { id?: string };
      if (res.status !== 202 || !body.id) throw new Error(`submit answered ${res.status}: ${JSON.stringify(body)}`);
      return body.id;
    },
    async status(taskId) {
      const row = (await findTask(gateway.deps.db, taskId))!;
      return { status: row.status, startedAt: row.startedAt, upstreamCallback: row.upstreamCallback, errorCode: row.errorCode };
    },
    async close() {
      await Promise.all(stops.map((stop) => stop()));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await gateway.close();
    },
  };
}

/** Waits for `probe` to hold (every 20 ms), failing after `timeoutMs`. */
export async function until<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
