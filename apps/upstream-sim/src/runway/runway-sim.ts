import { randomUUID } from "node:crypto";
import type { Endpoint } from "@gen/domain";
import express, { type NextFunction, type Request, type Response } from "express";
import { HUGE_ANSWER_BYTES, sendPaddedAnswer } from "../padded-answer.ts";
import { createProviderSimJobs, ratioToSize, type ProviderSimJob } from "../provider-sim-jobs.ts";
import { parseUpDirectives } from "../up-directives.ts";

export interface RunwaySimOptions {
  /** Base of the file URLs it hands out; by default taken from each request's Host header. */
  publicUrl?: string;
  defaultDelayMs?: number;
  now?: () => number;
  maxJobs?: number;
  /** The only API secret accepted; absent: any. */
  apiSecret?: string;
}

type Json = Record<string, unknown>;

/** The API version the SDK sends and the simulator speaks. */
const RUNWAY_API_VERSION = "2024-11-06";

/** Models that only animate an image: text_to_video refuses them. */
const IMAGE_ONLY_MODELS = new Set(["gen4_turbo", "gen3a_turbo"]);

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function error(res: Response, status: number, message: string, extra: Json = {}): void {
  res.status(status).json({ error: message, ...extra });
}

/** Our parameters from a Runway body, for simulateGeneration. */
function paramsOf(body: Json): Json {
  const params: Json = { prompt: body.promptText ?? "" };
  const size = ratioToSize(body.ratio);
  if (size) params.size = size;
  if (body.duration !== undefined) params.duration_seconds = body.duration;
  if (body.seed !== undefined) params.seed = body.seed;
  return params;
}

/**
 * Runway's API as its reference documents it, for what the adapter uses: `POST /v1/image_to_video`,
 * `/v1/text_to_video` and `/v1/text_to_image` answering `{ id }`, `GET /v1/tasks/{id}` with the
 * statuses PENDING, THROTTLED, RUNNING, SUCCEEDED (`output`: URLs), FAILED (`failure`,
 * `failureCode`) and CANCELLED, `DELETE /v1/tasks/{id}` to cancel; `Authorization: Bearer` and
 * `X-Runway-Version` required. No webhooks: Runway's API has none. Faults: `[[up:…]]` directives
 * (apps/upstream-sim/README.md).
 */
export function createRunwaySim(options: RunwaySimOptions = {}): express.Router {
  const now = options.now ?? Date.now;
  const jobs = createProviderSimJobs({ now, defaultDelayMs: options.defaultDelayMs ?? 0, maxJobs: options.maxJobs ?? 10_000 });
  const base = (req: Request) => `${(options.publicUrl ?? `${req.protocol}://${req.get("host") ?? "localhost"}`).replace(/\/$/, "")}${req.baseUrl}`;

  function view(job: ProviderSimJob, root: string): Json {
    const head = { id: job.id, createdAt: new Date(job.createdAt).toISOString() };
    const { directives } = job;
    if (job.canceled) return { ...head, status: "CANCELLED" };
    if (!jobs.isDone(job)) return jobs.isEarly(job) ? { ...head, status: "PENDING" } : { ...head, status: "RUNNING", progress: 0.5 };
    if (directives.policyInput)
      return { ...head, status: "FAILED", failure: "The prompt was rejected by content moderation.", failureCode: "SAFETY.INPUT.TEXT" };
    if (directives.policyOutput)
      return { ...head, status: "FAILED", failure: "The output was rejected by content moderation.", failureCode: "SAFETY.OUTPUT.VIDEO" };
    if (directives.failInput) return { ...head, status: "FAILED", failure: "The input image could not be processed.", failureCode: "ASSET.INVALID" };
    if (directives.fail) return { ...head, status: "FAILED", failure: "An unexpected error occurred.", failureCode: "INTERNAL.BAD_OUTPUT.CODE01" };
    return { ...head, status: "SUCCEEDED", output: directives.noUrls ? [] : jobs.fileUrls(job, `${root}/files`) };
  }

  function start(endpoint: Endpoint, required: string[], check?: (body: Json) => string | undefined) {
    return (req: Request, res: Response) => {
      const body: unknown = req.body;
      if (!isObject(body)) return error(res, 400, "Validation of body failed");
      const missing = ["model", ...required].find((field) => typeof body[field] !== "string" || body[field] === "");
      const invalid = missing === undefined ? check?.(body) : `Invalid input: expected string, received undefined at ${missing}`;
      if (invalid !== undefined) return error(res, 400, "Validation of body failed", { issues: [{ message: invalid }] });
      const directives = parseUpDirectives(body);
      if (jobs.throttle(`submit:${JSON.stringify(body)}`, directives.submit429)) {
        res.set("Retry-After", String(directives.retryAfterSeconds ?? 1));
        return error(res, 429, "You have exceeded the rate limit for this endpoint.");
      }
      if (directives.submit500) return error(res, 500, "An internal error occurred.");
      if (directives.reject)
        return error(res, 400, "Validation of body failed", { issues: [{ message: "promptText: String must contain at most 1000 character(s)" }] });
      const job: ProviderSimJob = {
        id: randomUUID(),
        endpoint,
        model: body.model as string,
        params: paramsOf(body),
        createdAt: now(),
        directives,
        canceled: false,
        polls: 0,
      };
      jobs.add(job);
      if (directives.hugeSubmit) return sendPaddedAnswer(res, 200, { id: job.id }, HUGE_ANSWER_BYTES);
      res.json({ id: job.id });
    };
  }

  const router = express.Router();
  router.get("/files/:id/:name", (req, res) => jobs.serveFile(req, res, (r) => error(r, 404, "Not found")));

  router.use((req: Request, res: Response, next: NextFunction) => {
    const match = /^Bearer (\S+)$/.exec(req.get("authorization") ?? "");
    if (!match || (options.apiSecret !== undefined && match[1] !== options.apiSecret))
      return error(res, 401, "Unauthorized: the API secret is missing or invalid.");
    if (req.get("x-runway-version") !== RUNWAY_API_VERSION) return error(res, 400, `Invalid API version: set X-Runway-Version to ${RUNWAY_API_VERSION}.`);
    next();
  });

  router.post("/v1/image_to_video", start("videos", ["promptImage"]));
  router.post(
    "/v1/text_to_video",
    start("videos", ["promptText"], (body) =>
      IMAGE_ONLY_MODELS.has(body.model as string) ? `model: ${String(body.model)} is not available for text_to_video` : undefined,
    ),
  );
  router.post("/v1/text_to_image", start("images", ["promptText"]));

  router.get("/v1/tasks/:id", (req, res) => {
    const job = jobs.get(req.params.id);
    if (!job) return error(res, 404, "Task not found.");
    job.polls += 1;
    const { directives } = job;
    if (jobs.throttle(`poll:${job.id}`, directives.pollRateLimit)) {
      res.set("Retry-After", String(directives.retryAfterSeconds ?? 1));
      return error(res, 429, "You have exceeded the rate limit for this endpoint.");
    }
    if (directives.poll500 !== undefined && job.polls <= directives.poll500) return error(res, 500, "An internal error occurred.");
    const root = base(req);
    if (directives.pollAnswer && !job.canceled)
      return sendPaddedAnswer(res, 200, view(job, root), directives.pollAnswer === "huge" ? HUGE_ANSWER_BYTES : Infinity);
    res.json(view(job, root));
  });

  router.delete("/v1/tasks/:id", (req, res) => {
    const job = jobs.get(req.params.id);
    if (!job) return error(res, 404, "Task not found.");
    // Cancels a task still running; a finished one is deleted (kept here, as it changes nothing the adapter reads).
    if (!jobs.isDone(job)) job.canceled = true;
    res.status(204).end();
  });

  router.use((_req, res) => error(res, 404, "Not found."));
  return router;
}
