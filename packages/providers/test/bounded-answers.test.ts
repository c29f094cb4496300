import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Readable, pipeline } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { ProviderUnavailableError, createHttpProvider, type ProviderJob } from "../src/index.ts";
import { closeServer, listenOnLoopback } from "./support/loopback-server.ts";

// A hostile or broken upstream answering 700 MB, or never finishing its answer: the provider reads
// at most UPSTREAM_MAX_RESPONSE_BYTES of it. The server streams with backpressure and counts what
// it managed to write, so the count shows where the reader stopped; nothing is buffered here.
const CAP = 1024 * 1024;
const HUGE = 700 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, "a");
// Loopback socket buffers (both ends, autotuned) hold a few MB beyond what the reader took.
const WRITTEN_BOUND = 64 * 1024 * 1024;

type Mode = "huge" | "huge-declared" | "endless";

let server: Server;
let base: string;
let mode: Mode;
let written = 0;
let answersClosed = 0;

/** The JSON would be valid if read whole: a job id (or a running status) and a long `pad`. */
function head(req: IncomingMessage): string {
  return req.method === "POST" ? '{"id":"job-1","pad":"' : '{"status":"running","pad":"';
}

/** 700 MB (or endless) JSON, pulled by the socket as it drains: the test never holds more than a few chunks. */
async function* padded(req: IncomingMessage): AsyncGenerator<string | Buffer> {
  yield head(req);
  for (let sent = 0; mode === "endless" || sent < HUGE; sent += CHUNK.length) {
    written += CHUNK.length;
    yield CHUNK;
    // The endless answer trickles: 64 KiB every 10 ms, for as long as anyone reads.
    if (mode === "endless") await delay(10);
  }
  yield '"}';
}

function stream(req: IncomingMessage, res: ServerResponse): void {
  res.on("close", () => answersClosed++);
  const declared = mode === "huge-declared" ? { "content-length": String(HUGE) } : {};
  res.writeHead(200, { "content-type": "application/json", ...declared });
  // A reader that hangs up destroys the response, and pipeline then stops the generator.
  pipeline(Readable.from(padded(req)), res, () => {});
}

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => stream(req, res));
  });
  base = await listenOnLoopback(server);
});

afterAll(() => closeServer(server));

beforeEach(() => {
  written = 0;
  answersClosed = 0;
});

const job: ProviderJob = { taskId: "task_00000000000000000000000000000001", endpoint: "images", model: "upstream-image-1", params: { prompt: "cat" } };

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Runs one call, waits until the server saw its answer closed, and reports what it cost. */
async function measured(what: string, call: () => Promise<unknown>): Promise<unknown> {
  global.gc?.();
  const before = process.memoryUsage().rss;
  const outcome = await call().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  for (let waited = 0; answersClosed === 0 && waited < 10_000; waited += 20) await delay(20);
  const after = process.memoryUsage().rss;
  console.log(`${what} (${mode}): server wrote ${mb(written)} before the reader hung up; RSS ${mb(before)} -> ${mb(after)}`);
  expect(answersClosed).toBe(1);
  expect(written).toBeLessThan(WRITTEN_BOUND);
  // Generous: reading the whole answer would take at least 700 MB.
  expect(after - before).toBeLessThan(200 * 1024 * 1024);
  return "error" in outcome ? outcome.error : outcome.value;
}

describe.each<Mode>(["huge", "huge-declared", "endless"])("an upstream answering %s", (answerMode) => {
  beforeEach(() => {
    mode = answerMode;
  });
  const provider = () => createHttpProvider({ baseUrl: base, timeoutMs: 60_000, maxResponseBytes: CAP });

  test("submit: the read stops at the cap and the submission is unavailable (the worker retries it within its budget, then 80001)", async () => {
    const error = await measured("submit", () => provider().submit(job));
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect((error as Error).message).toContain(`exceeds ${CAP} bytes`);
  });

  test("poll: the read stops at the cap and the poll fails as an unusable answer (the task polls on)", async () => {
    const error = await measured("poll", () => provider().poll("job-1"));
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect((error as Error).message).toContain(`exceeds ${CAP} bytes`);
  });

  test("cancel: the read stops at the cap and cancel still resolves", async () => {
    expect(await measured("cancel", () => provider().cancel("job-1"))).toBeUndefined();
  });
});

test("the default cap is 1 MiB: an answer of 1 MiB + 1 byte is refused, one of 1 MiB is read", async () => {
  const sized = (size: number) => (_req: IncomingMessage, res: ServerResponse) => {
    const body = `{"status":"running","pad":"${"a".repeat(size - 29)}"}`;
    expect(Buffer.byteLength(body)).toBe(size);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(body);
  };
  const exact = createServer(sized(CAP));
  const over = createServer(sized(CAP + 1));
  const urls = await Promise.all([exact, over].map(listenOnLoopback));
  try {
    await expect(createHttpProvider({ baseUrl: urls[0]! }).poll("a")).resolves.toEqual({ state: "running" });
    await expect(createHttpProvider({ baseUrl: urls[1]! }).poll("a")).rejects.toBeInstanceOf(ProviderUnavailableError);
  } finally {
    await Promise.all([exact, over].map(closeServer));
  }
});
