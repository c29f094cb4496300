// The same-work floor of the HTTP figures: the gateway's round trips with none of its code, on the
// same database, Redis and QUEUE_PREFIX, behind the same HTTP layer as bare Express; pg, ioredis and
// BullMQ called directly (key lookup, one limiter script, one statement for debit + task + reserve
// row, one enqueue; a poll is key lookup, limiter, one select), so gateway / floor says how close
// our code is to its own design's limit. No validation, pricing, logging or metrics: what is left
// is the cost of the round trips.
import { Queue } from "bullmq";
import express, { type Request, type Response } from "express";
import pg from "pg";
import { hashApiKey } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, QUEUE_NAMES, createRedis, generationJobId } from "@gen/queues";
import { RateLimiter } from "../../packages/rate-limit/src/index.ts";
import { insertTask, readTask, userOfKey, type TaskRow } from "./same-work-sql.ts";

interface SameWork {
  /** The key's user, or null for an unknown or revoked key. */
  userOf(keyHash: string): Promise<string | null>;
  /** Debit, task and reserve row, all or none; null without credits. */
  insert(userId: string, model: string, input: object, price: number): Promise<TaskRow | null>;
  read(id: string, userId: string): Promise<TaskRow | null>;
}

const env = process.env;
// The gateway's pool size (createDatabase's default).
const POOL_MAX = 10;
const PRICE = 4;

function floor(url: string): SameWork {
  const pool = new pg.Pool({ connectionString: url, max: POOL_MAX });
  return { userOf: (keyHash) => userOfKey(pool, keyHash), insert: (...args) => insertTask(pool, ...args), read: (id, userId) => readTask(pool, id, userId) };
}

const work = floor(env.DATABASE_URL!);
const redis = createRedis(env.REDIS_URL!, "request");
const queue = new Queue(QUEUE_NAMES.generation, { connection: redis, prefix: env.QUEUE_PREFIX! });
const limiter = new RateLimiter(redis, env.QUEUE_PREFIX!);
const rate = (kind: "POLL" | "SUBMIT") => ({ perSec: Number(env[`${kind}_RATE_PER_SEC`]), burst: Number(env[`${kind}_RATE_BURST`]) });

const render = (task: TaskRow) => ({
  id: task.id,
  object: "task",
  status: task.status,
  model: task.model,
  created_at: task.createdAt.toISOString(),
  output: task.output ?? null,
  error: null,
  usage: { credits: task.reservedCredits },
});

/** Key lookup then one limiter call, as the gateway's authenticate and rateLimit middleware do. */
async function admit(req: Request, res: Response, kind: "poll" | "submit"): Promise<string | null> {
  const key = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
  const userId = key ? await work.userOf(hashApiKey(key)) : null;
  if (!userId) {
    res.status(401).json({ error: "unauthorized" });
    return null;
  }
  const decision = await limiter.take(kind, userId, rate(kind === "poll" ? "POLL" : "SUBMIT"));
  if (!decision.allowed) {
    res.status(429).json({ error: "rate limited" });
    return null;
  }
  return userId;
}

const app = express();
app.post("/api/v1/images/generations", express.json({ limit: "1mb" }), async (req, res) => {
  const userId = await admit(req, res, "submit");
  if (!userId) return;
  const { model, ...input } = req.body as { model: string };
  const task = await work.insert(userId, model, input, PRICE);
  if (!task) {
    res.status(402).json({ error: "insufficient credits" });
    return;
  }
  await queue.add("generate", { taskId: task.id }, { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(task.id) });
  res.status(202).json(render(task));
});
app.get("/api/v1/tasks/:id", async (req, res) => {
  const userId = await admit(req, res, "poll");
  if (!userId) return;
  const task = await work.read(req.params.id, userId);
  if (task) res.json(render(task));
  else res.status(404).json({ error: "not found" });
});
const server = app.listen(Number(env.PORT), "127.0.0.1", () => process.send?.({ ready: true }));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
