import type { IncomingMessage, ServerResponse } from "node:http";
import type { GenClient } from "./gen-client.ts";
import { GenApiError } from "./gen-errors.ts";
import type { BackoffOptions } from "./retry-timing.ts";
import { TokenBucket } from "./token-bucket.ts";
import type { Task } from "./types.ts";
import { isTerminalStatus } from "./vocabulary.ts";

export interface WebhookReceiverOptions {
  /** Reads tasks with the caller's own key: a webhook body is never trusted, only its `id`. */
  client: Pick<GenClient, "getTask" | "waitForTask">;
  /** Called once per tracked task with the task as the API returns it (completed or failed). */
  onTask: (task: Task) => void | Promise<void>;
  /** Expected run time of a task when `track` is not told. Default 60 s. */
  expectedMs?: number;
  /** Added to the expected time before the fallback poll starts. Default 5 minutes (docs/api.md#receiving-webhooks). */
  fallbackGraceMs?: number;
  /** How often overdue tasks are looked for. Default 5 s. */
  checkIntervalMs?: number;
  /** Bound of one fallback `waitForTask`; after it the task is tried again a grace period later. Default 10 minutes. */
  fallbackTimeoutMs?: number;
  /** Poll intervals of the fallback `waitForTask`. Default 1 s doubling up to 5 s. */
  fallbackPollBackoff?: BackoffOptions;
  /** Lookups (verifications and fallback polls started) per second, and their burst. Default 5 and 5. */
  lookupsPerSecond?: number;
  lookupBurst?: number;
  /** Concurrent verifications and concurrent fallback polls. Default 2 each. */
  verifyConcurrency?: number;
  fallbackConcurrency?: number;
  /** Largest body `nodeHandler` reads. Default 5 MiB. */
  maxBodyBytes?: number;
  /** Failed lookups and errors thrown by `onTask`. Default: console.error. */
  onError?: (error: unknown, taskId: string) => void;
}

export interface HandleResult {
  /** The status to answer the delivery with. */
  status: 200 | 400;
  /** Whether the call led to a verification (false: unknown, forged, repeated or not yet tracked). */
  accepted: boolean;
}

export interface WebhookReceiver {
  /** Record a task id at submission; a webhook for an id that was never tracked is ignored. */
  track(task: string | { id: string }, expectedMs?: number): void;
  /** Decide on one delivery; returns at once, the lookup and `onTask` run afterwards. */
  handle(body: string | Uint8Array | object): HandleResult;
  /** A `(req, res)` handler for node:http and Express (raw, text or JSON body parsers, or none). */
  nodeHandler(): (req: IncomingMessage, res: ServerResponse) => void;
  /** Ids tracked and not delivered to `onTask` yet. */
  pendingIds(): string[];
  /** Resolves when no lookup is queued or running and no `onTask` is running. */
  idle(): Promise<void>;
  /** Stops the timers and running lookups; resolves when running `onTask` calls have returned. */
  close(): Promise<void>;
}

interface Entry {
  dueAt: number;
  state: "waiting" | "queued" | "running";
}

interface Job {
  id: string;
  kind: "verify" | "fallback";
}

// A fast task's webhook can arrive before the submitter has recorded the id; such ids are kept
// briefly so that `track` verifies them at once instead of waiting for the fallback poll.
const EARLY_TTL_MS = 60_000;
const EARLY_MAX = 1000;

/** docs/api.md#receiving-webhooks: tracked ids only, each once, verified, throttled, with a fallback poll. */
export function createWebhookReceiver(options: WebhookReceiverOptions): WebhookReceiver {
  const { client, onTask } = options;
  const expectedMs = options.expectedMs ?? 60_000;
  const graceMs = options.fallbackGraceMs ?? 5 * 60_000;
  const fallbackTimeoutMs = options.fallbackTimeoutMs ?? 10 * 60_000;
  const fallbackPollBackoff = options.fallbackPollBackoff ?? { initialMs: 1000, maxMs: 5000 };
  const verifyConcurrency = options.verifyConcurrency ?? 2;
  const fallbackConcurrency = options.fallbackConcurrency ?? 2;
  const maxBodyBytes = options.maxBodyBytes ?? 5 * 1024 * 1024;
  const onError = options.onError ?? ((error: unknown, taskId: string) => console.error(`webhook receiver: task ${taskId}:`, error));
  const bucket = new TokenBucket(options.lookupsPerSecond ?? 5, options.lookupBurst ?? 5);

  const tracked = new Map<string, Entry>();
  const early = new Map<string, number>();
  let queue: Job[] = [];
  const running = new Set<Promise<void>>();
  const active = { verify: 0, fallback: 0 };
  let idleWaiters: (() => void)[] = [];
  let pumpTimer: NodeJS.Timeout | undefined;
  let closed = false;
  const abort = new AbortController();

  const checkTimer = setInterval(checkOverdue, options.checkIntervalMs ?? 5000);
  checkTimer.unref();

  function enqueue(id: string, entry: Entry, kind: Job["kind"]): void {
    entry.state = "queued";
    queue.push({ id, kind });
    queueMicrotask(pump);
  }

  function pump(): void {
    if (closed) return;
    for (let i = 0; i < queue.length;) {
      const job = queue[i]!;
      const limit = job.kind === "verify" ? verifyConcurrency : fallbackConcurrency;
      if (active[job.kind] >= limit) {
        i++;
        continue;
      }
      const wait = bucket.take();
      if (wait > 0) {
        if (!pumpTimer) {
          pumpTimer = setTimeout(() => {
            pumpTimer = undefined;
            pump();
          }, wait);
        }
        break;
      }
      queue.splice(i, 1);
      start(job);
    }
    notifyIdle();
  }

  function start(job: Job): void {
    const entry = tracked.get(job.id);
    if (!entry) return;
    entry.state = "running";
    active[job.kind]++;
    const run = (job.kind === "verify" ? verify(job.id, entry) : fallback(job.id, entry)).finally(() => {
      active[job.kind]--;
      running.delete(run);
      pump();
    });
    running.add(run);
  }

  async function verify(id: string, entry: Entry): Promise<void> {
    let task: Task;
    try {
      task = await client.getTask(id, { signal: abort.signal });
    } catch (error) {
      return lookupFailed(id, entry, error, entry.dueAt);
    }
    // Not finished: an early or forged call. Keep waiting for the real one or the fallback poll.
    if (!isTerminalStatus(task.status)) entry.state = "waiting";
    else await deliver(id, task);
  }

  async function fallback(id: string, entry: Entry): Promise<void> {
    let task: Task;
    try {
      task = await client.waitForTask(id, { timeoutMs: fallbackTimeoutMs, signal: abort.signal, pollBackoff: fallbackPollBackoff });
    } catch (error) {
      return lookupFailed(id, entry, error, Date.now() + graceMs);
    }
    await deliver(id, task);
  }

  function lookupFailed(id: string, entry: Entry, error: unknown, retryAt: number): void {
    if (closed) return;
    // 404: the id is not (or no longer) this key's task; nothing will ever complete it.
    if (error instanceof GenApiError && error.status === 404) tracked.delete(id);
    else Object.assign(entry, { state: "waiting", dueAt: retryAt });
    onError(error, id);
  }

  async function deliver(id: string, task: Task): Promise<void> {
    tracked.delete(id);
    try {
      await onTask(task);
    } catch (error) {
      onError(error, id);
    }
  }

  function checkOverdue(): void {
    const now = Date.now();
    for (const [id, entry] of tracked) {
      if (entry.state === "waiting" && entry.dueAt <= now) enqueue(id, entry, "fallback");
    }
    for (const [id, seenAt] of early) {
      if (seenAt > now - EARLY_TTL_MS) break;
      early.delete(id);
    }
  }

  function notifyIdle(): void {
    if (queue.length > 0 || running.size > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  function rememberEarly(id: string): void {
    early.delete(id);
    early.set(id, Date.now());
    if (early.size > EARLY_MAX) early.delete(early.keys().next().value!);
  }

  function handle(body: string | Uint8Array | object): HandleResult {
    let parsed: unknown = body;
    try {
      if (typeof body === "string") parsed = JSON.parse(body);
      else if (body instanceof Uint8Array) parsed = JSON.parse(Buffer.from(body).toString("utf8"));
    } catch {
      return { status: 400, accepted: false };
    }
    const id = (parsed as { id?: unknown } | null)?.id;
    if (typeof id !== "string" || id.length === 0 || id.length > 200) return { status: 400, accepted: false };
    if (closed) return { status: 200, accepted: false };
    const entry = tracked.get(id);
    if (!entry) {
      // Unknown or forged, or already handled: 2xx so nothing is repeated, and no lookup.
      rememberEarly(id);
      return { status: 200, accepted: false };
    }
    if (entry.state !== "waiting") return { status: 200, accepted: false };
    enqueue(id, entry, "verify");
    return { status: 200, accepted: true };
  }

  return {
    track(task, taskExpectedMs) {
      const id = typeof task === "string" ? task : task.id;
      if (closed || tracked.has(id)) return;
      const entry: Entry = { state: "waiting", dueAt: Date.now() + (taskExpectedMs ?? expectedMs) + graceMs };
      tracked.set(id, entry);
      const seenAt = early.get(id);
      if (seenAt !== undefined) {
        early.delete(id);
        if (seenAt > Date.now() - EARLY_TTL_MS) enqueue(id, entry, "verify");
      }
    },
    handle,
    nodeHandler() {
      return (req, res) => {
        const reply = (status: number) => {
          if (!res.headersSent) res.writeHead(status).end();
        };
        if (req.method !== "POST") return reply(405);
        // Express body parsers leave a Buffer (raw), a string (text) or an object (json) in req.body.
        const preParsed = (req as { body?: unknown }).body;
        if (typeof preParsed === "string" || (preParsed !== null && typeof preParsed === "object")) {
          return reply(handle(preParsed).status);
        }
        if (req.readableEnded) return reply(400);
        const chunks: Buffer[] = [];
        let size = 0;
        req.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size <= maxBodyBytes) chunks.push(chunk);
          // Answered now; the rest of the upload is read and dropped, and the connection closed.
          else if (!res.headersSent) res.writeHead(413, { Connection: "close" }).end();
        });
        req.on("end", () => reply(handle(Buffer.concat(chunks)).status));
        req.on("error", () => reply(400));
      };
    },
    pendingIds: () => [...tracked.keys()],
    idle() {
      if (queue.length === 0 && running.size === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async close() {
      closed = true;
      clearInterval(checkTimer);
      clearTimeout(pumpTimer);
      queue = [];
      abort.abort();
      await Promise.allSettled([...running]);
      notifyIdle();
    },
  };
}
