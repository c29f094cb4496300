import { randomUUID } from "node:crypto";
import { SDK_VERSION } from "./generated/version.ts";
import { GenApiError, GenConnectionError, GenTimeoutError } from "./gen-errors.ts";
import { abortReason, backoffDelay, parseRetryAfter, sleep, type BackoffOptions } from "./retry-timing.ts";
import { isTerminalStatus } from "./vocabulary.ts";
import type {
  Account,
  AudioOutput,
  AudioRequest,
  DetectOutput,
  DetectRequest,
  EssayOutput,
  EssayRequest,
  HumanizeOutput,
  HumanizeRequest,
  ImageOutput,
  ImageRequest,
  ModelInfo,
  ModerationOutput,
  ModerationRequest,
  Task,
  TaskInclude,
  TaskList,
  TaskListQuery,
  TaskOutput,
  VideoOutput,
  VideoRequest,
} from "./types.ts";

export interface GenClientOptions {
  /** e.g. `https://api.example.com` (no trailing `/api/v1`). */
  baseUrl: string;
  /** `sk_…`; sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  fetch?: typeof globalThis.fetch;
  /** Retries of one call after a retryable failure (429, 500, 502-504, network). Default 3. */
  maxRetries?: number;
  /** Delays between retries. Default 250 ms doubling up to 5 s. */
  retryBackoff?: BackoffOptions;
  /** Intervals between polls of `waitForTask`. Default 250 ms doubling up to 5 s. */
  pollBackoff?: BackoffOptions;
  /** Your application's product token, sent before the SDK's own in `User-Agent` (e.g. `my-app/2.1`). */
  userAgent?: string;
}

export interface SubmitOptions {
  /** Sent as `Idempotency-Key`; a random one is used when absent, and reused by every retry. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface GetTaskOptions {
  include?: TaskInclude[];
  signal?: AbortSignal;
}

export interface WaitForTaskOptions {
  /** Default 10 minutes. */
  timeoutMs?: number;
  signal?: AbortSignal;
  include?: TaskInclude[];
  pollBackoff?: BackoffOptions;
}

export interface RunOptions extends SubmitOptions {
  /** How long to wait for the task after it was accepted. Default 10 minutes. */
  timeoutMs?: number;
  pollBackoff?: BackoffOptions;
}

/** Each submission endpoint's method name, request body and `output`. */
interface Submissions {
  images: [ImageRequest, ImageOutput];
  videos: [VideoRequest, VideoOutput];
  audio: [AudioRequest, AudioOutput];
  detect: [DetectRequest, DetectOutput];
  humanize: [HumanizeRequest, HumanizeOutput];
  essay: [EssayRequest, EssayOutput];
  moderations: [ModerationRequest, ModerationOutput];
}
export type SubmissionEndpoint = keyof Submissions;

const SUBMISSION_PATHS: Readonly<Record<SubmissionEndpoint, string>> = {
  images: "/api/v1/images/generations",
  videos: "/api/v1/videos/generations",
  audio: "/api/v1/audio/generations",
  detect: "/api/v1/detect",
  humanize: "/api/v1/humanize",
  essay: "/api/v1/essay",
  moderations: "/api/v1/moderations",
};

interface RequestOptions {
  body?: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal | undefined;
  maxRetries?: number;
}

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 5000 };
const DEFAULT_WAIT_MS = 10 * 60_000;

export class GenClient {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof globalThis.fetch;
  readonly #maxRetries: number;
  readonly #retryBackoff: BackoffOptions;
  readonly #pollBackoff: BackoffOptions;
  readonly #userAgent: string;

  constructor(options: GenClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#maxRetries = options.maxRetries ?? 3;
    this.#retryBackoff = options.retryBackoff ?? DEFAULT_BACKOFF;
    this.#pollBackoff = options.pollBackoff ?? DEFAULT_BACKOFF;
    const own = `gen-client/${SDK_VERSION} node/${process.versions.node}`;
    this.#userAgent = options.userAgent ? `${options.userAgent} ${own}` : own;
  }

  images(body: ImageRequest, options?: SubmitOptions): Promise<Task<ImageOutput>> {
    return this.#submit(SUBMISSION_PATHS.images, body, options);
  }
  videos(body: VideoRequest, options?: SubmitOptions): Promise<Task<VideoOutput>> {
    return this.#submit(SUBMISSION_PATHS.videos, body, options);
  }
  audio(body: AudioRequest, options?: SubmitOptions): Promise<Task<AudioOutput>> {
    return this.#submit(SUBMISSION_PATHS.audio, body, options);
  }
  detect(body: DetectRequest, options?: SubmitOptions): Promise<Task<DetectOutput>> {
    return this.#submit(SUBMISSION_PATHS.detect, body, options);
  }
  humanize(body: HumanizeRequest, options?: SubmitOptions): Promise<Task<HumanizeOutput>> {
    return this.#submit(SUBMISSION_PATHS.humanize, body, options);
  }
  essay(body: EssayRequest, options?: SubmitOptions): Promise<Task<EssayOutput>> {
    return this.#submit(SUBMISSION_PATHS.essay, body, options);
  }
  moderations(body: ModerationRequest, options?: SubmitOptions): Promise<Task<ModerationOutput>> {
    return this.#submit(SUBMISSION_PATHS.moderations, body, options);
  }

  /**
   * Submits, then waits for the task by polling (`waitForTask`: 250 ms doubling to 5 s, each 429
   * answered by waiting its `Retry-After`) and returns it `completed` or `failed`.
   */
  async run<E extends SubmissionEndpoint>(endpoint: E, body: Submissions[E][0], options: RunOptions = {}): Promise<Task<Submissions[E][1]>> {
    const task = await this.#submit<Task<Submissions[E][1]>>(SUBMISSION_PATHS[endpoint], body, options);
    if (isTerminalStatus(task.status)) return task;
    return this.waitForTask(task, { timeoutMs: options.timeoutMs, signal: options.signal, pollBackoff: options.pollBackoff });
  }

  /** The models a submission can use, with each one's request schema, sizes, qualities and pricing. */
  async models(options: { signal?: AbortSignal } = {}): Promise<ModelInfo[]> {
    const list = await this.#request<{ data: ModelInfo[] }>("GET", "/api/v1/models", { signal: options.signal });
    return list.data;
  }

  /** One page of your tasks, newest first; pass `next_cursor` as `cursor` for the next page. */
  listTasks(query: TaskListQuery = {}, options: { signal?: AbortSignal } = {}): Promise<TaskList> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
    const search = params.size > 0 ? `?${params}` : "";
    return this.#request("GET", `/api/v1/tasks${search}`, { signal: options.signal });
  }

  /** Every task matching the filters, newest first, page after page. */
  async *iterateTasks(query: Omit<TaskListQuery, "cursor"> = {}, options: { signal?: AbortSignal } = {}): AsyncGenerator<Task> {
    let cursor: string | undefined;
    do {
      const page = await this.listTasks({ ...query, cursor }, options);
      yield* page.data;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  getTask<O = TaskOutput>(id: string, options: GetTaskOptions = {}): Promise<Task<O>> {
    return this.#request("GET", taskPath(id, options.include), { signal: options.signal });
  }

  /** A queued or running task becomes failed/80008 with a full refund; a finished one comes back unchanged. */
  cancel<O = TaskOutput>(id: string, options: { signal?: AbortSignal } = {}): Promise<Task<O>> {
    return this.#request("POST", `/api/v1/tasks/${encodeURIComponent(id)}/cancel`, { signal: options.signal });
  }

  account(options: { signal?: AbortSignal } = {}): Promise<Account> {
    return this.#request("GET", "/api/v1/account", { signal: options.signal });
  }

  /**
   * Polls until the task is `completed` or `failed` and returns it (a failed task is returned, not
   * thrown: its reason is in `error`). Throws GenTimeoutError when time runs out, and GenApiError
   * for answers that retrying cannot fix (401, 404, …).
   */
  waitForTask<O>(task: Task<O>, options?: WaitForTaskOptions): Promise<Task<O>>;
  waitForTask<O = TaskOutput>(task: string | { id: string }, options?: WaitForTaskOptions): Promise<Task<O>>;
  async waitForTask<O>(task: string | { id: string }, options: WaitForTaskOptions = {}): Promise<Task<O>> {
    const id = typeof task === "string" ? task : task.id;
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
    const deadline = Date.now() + timeoutMs;
    const backoff = options.pollBackoff ?? this.#pollBackoff;
    const path = taskPath(id, options.include);
    let lastStatus: string | null = null;
    let polls = 0;
    let failures = 0;
    for (;;) {
      let delay: number;
      try {
        const current = await this.#request<Task<O>>("GET", path, { signal: options.signal, maxRetries: 0 });
        if (isTerminalStatus(current.status)) return current;
        lastStatus = current.status;
        failures = 0;
        delay = Math.min(backoff.maxMs, backoff.initialMs * 2 ** polls++);
      } catch (error) {
        if (!(error instanceof GenApiError || error instanceof GenConnectionError) || !error.retryable) throw error;
        delay = (error instanceof GenApiError ? error.retryAfterMs : null) ?? backoffDelay(failures++, this.#retryBackoff);
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new GenTimeoutError(id, timeoutMs, lastStatus);
      await sleep(Math.min(delay, remaining), options.signal);
    }
  }

  #submit<T>(path: string, body: object, options: SubmitOptions = {}): Promise<T> {
    // The key is fixed before the first attempt: every retry carries it, so the server answers a
    // retry of a request it already accepted with the original task instead of a second charge.
    const idempotencyKey = options.idempotencyKey ?? `genc_${randomUUID()}`;
    return this.#request("POST", path, { body, idempotencyKey, signal: options.signal });
  }

  async #request<T>(method: string, path: string, options: RequestOptions): Promise<T> {
    const maxRetries = options.maxRetries ?? this.#maxRetries;
    const headers: Record<string, string> = { Authorization: `Bearer ${this.#apiKey}`, Accept: "application/json", "User-Agent": this.#userAgent };
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    if (options.idempotencyKey !== undefined) headers["Idempotency-Key"] = options.idempotencyKey;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const url = `${this.#baseUrl}${path}`;

    for (let attempt = 0; ; attempt++) {
      let response: Response;
      let text: string;
      try {
        response = await this.#fetch(url, { method, headers, body, signal: options.signal });
        text = await response.text();
      } catch (error) {
        if (options.signal?.aborted) throw abortReason(options.signal);
        const failure = new GenConnectionError(`${method} ${path} failed: ${(error as Error).message}`, error);
        if (attempt >= maxRetries) throw failure;
        await sleep(backoffDelay(attempt, this.#retryBackoff), options.signal);
        continue;
      }
      if (response.ok) return JSON.parse(text) as T;
      const error = toApiError(response, text);
      if (!error.retryable || attempt >= maxRetries) throw error;
      await sleep(error.retryAfterMs ?? backoffDelay(attempt, this.#retryBackoff), options.signal);
    }
  }
}

function taskPath(id: string, include: TaskInclude[] | undefined): string {
  const query = include && include.length > 0 ? `?include=${include.map(encodeURIComponent).join(",")}` : "";
  return `/api/v1/tasks/${encodeURIComponent(id)}${query}`;
}

function toApiError(response: Response, text: string): GenApiError {
  let envelope: { code?: unknown; message?: unknown; request_id?: unknown } | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: typeof envelope };
    if (parsed && typeof parsed.error === "object" && parsed.error !== null) envelope = parsed.error;
  } catch {
    // Not an envelope (a proxy's HTML page, an empty body): status and headers still tell enough.
  }
  const code = typeof envelope?.code === "number" ? envelope.code : null;
  const requestId = typeof envelope?.request_id === "string" ? envelope.request_id : response.headers.get("x-request-id");
  const message = typeof envelope?.message === "string" ? envelope.message : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  return new GenApiError({ status: response.status, code, message, requestId, retryAfterMs: parseRetryAfter(response.headers.get("retry-after")) });
}
