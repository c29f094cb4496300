import { randomBytes } from "node:crypto";
import { MEDIA_ENDPOINTS, type Endpoint } from "@gen/domain";
import { type CompletedResult, UpstreamErrorType, UpstreamJobStatus } from "@gen/providers";
import { simulateGeneration } from "@gen/simulator";
import express, { type NextFunction, type Request, type Response } from "express";
import { inferEndpoint } from "./infer-endpoint.ts";
import { createOpenAISim } from "./openai/create-openai-sim.ts";
import { createReplicateSim } from "./replicate/replicate-sim.ts";
import { createRunwaySim } from "./runway/runway-sim.ts";
import { HUGE_ANSWER_BYTES, sendPaddedAnswer } from "./padded-answer.ts";
import { parseUpDirectives, type UpDirectives } from "./up-directives.ts";

export interface UpstreamSimOptions {
  /** Base of the file URLs it hands out; by default taken from each request's Host header. */
  publicUrl?: string;
  /** Time every job takes before it succeeds, on top of `[[up:delay_ms=N]]`. Default 0. */
  defaultDelayMs?: number;
  now?: () => number;
  /** Jobs kept in memory; the oldest are forgotten beyond this. */
  maxJobs?: number;
}

interface Job {
  id: string;
  model: string;
  endpoint: Endpoint;
  input: Record<string, unknown>;
  createdAt: number;
  directives: UpDirectives;
  canceled: boolean;
}

type JobView = { id: string; status: UpstreamJobStatus; [field: string]: unknown };

const CACHED_RESULTS = 32;

function errorBody(type: UpstreamErrorType, message: string) {
  return { error: { type, message } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * An upstream speaking the submit-then-poll protocol of packages/providers/README.md, with the
 * fault injection listed there. Its output is the simulated provider's, served as files.
 */
export function createUpstreamSim(options: UpstreamSimOptions = {}): express.Application {
  const now = options.now ?? Date.now;
  const defaultDelayMs = options.defaultDelayMs ?? 0;
  const maxJobs = options.maxJobs ?? 10_000;
  const jobs = new Map<string, Job>();
  const results = new Map<string, CompletedResult>();
  /** Submits refused so far per `reference`, for `[[up:submit_429=N]]`. */
  const refusedSubmits = new Map<string, number>();

  function resultOf(job: Job): CompletedResult {
    let result = results.get(job.id);
    if (!result) {
      result = simulateGeneration({ endpoint: job.endpoint, model: job.model, params: job.input });
      results.set(job.id, result);
      if (results.size > CACHED_RESULTS) results.delete(results.keys().next().value as string);
    }
    return result;
  }

  function isDone(job: Job): boolean {
    return !job.directives.hang && now() >= job.createdAt + defaultDelayMs + (job.directives.delayMs ?? 0);
  }

  function view(job: Job, base: string): JobView {
    const head = { id: job.id, model: job.model, created_at: job.createdAt };
    if (job.canceled) return { ...head, status: UpstreamJobStatus.Canceled };
    if (!isDone(job)) return { ...head, status: UpstreamJobStatus.Running };
    if (job.directives.policyOutput)
      return { ...head, status: UpstreamJobStatus.Failed, ...errorBody(UpstreamErrorType.ContentPolicy, "The output violates the content policy") };
    if (job.directives.fail) return { ...head, status: UpstreamJobStatus.Failed, ...errorBody(UpstreamErrorType.Failed, "Simulated upstream failure") };
    if (job.directives.noUrls) return { ...head, status: UpstreamJobStatus.Succeeded, output: { urls: [] } };
    const result = resultOf(job);
    const ownUrls = (result.files ?? []).map((file, index) => `${base}/files/${job.id}/${index}.${file.extension}`);
    const output = MEDIA_ENDPOINTS.includes(job.endpoint) ? { urls: job.directives.outputUrl ? [job.directives.outputUrl] : ownUrls } : { data: result.data };
    const usage = result.tokens ? { input_tokens: result.tokens.input, output_tokens: result.tokens.output } : undefined;
    return { ...head, status: UpstreamJobStatus.Succeeded, output, ...(usage ? { usage } : {}) };
  }

  const baseOf = (req: Request) => (options.publicUrl ?? `${req.protocol}://${req.get("host") ?? "localhost"}`).replace(/\/$/, "");

  const app = express();
  app.disable("x-powered-by");
  app.use("/openai", createOpenAISim({ publicUrl: options.publicUrl, defaultDelayMs, now }));
  app.use(express.json({ limit: "4mb" }));
  // Every answer names its request, as providers do, for the operator to quote.
  app.use((_req, res, next) => {
    res.set("x-request-id", `req_${randomBytes(8).toString("hex")}`);
    next();
  });

  app.get("/healthz", (_req, res) => {
    res.json({ ok: true });
  });

  app.post("/v1/jobs", (req, res) => {
    const body: unknown = req.body;
    if (!isObject(body) || typeof body.model !== "string" || body.model === "" || !isObject(body.input)) {
      res.status(400).json(errorBody(UpstreamErrorType.InvalidInput, "Expected { model: string, input: object }"));
      return;
    }
    const directives = parseUpDirectives(body.input);
    if (directives.submit429 !== undefined) {
      const reference = typeof body.reference === "string" ? body.reference : "";
      const refused = refusedSubmits.get(reference) ?? 0;
      if (refused < directives.submit429) {
        refusedSubmits.set(reference, refused + 1);
        if (refusedSubmits.size > maxJobs) refusedSubmits.delete(refusedSubmits.keys().next().value as string);
        res.status(429).set("Retry-After", "1").json(errorBody(UpstreamErrorType.ServerError, "Simulated rate limit"));
        return;
      }
    }
    if (directives.submit500) {
      res.status(500).json(errorBody(UpstreamErrorType.ServerError, "Simulated upstream outage"));
      return;
    }
    if (directives.reject) {
      res.status(400).json(errorBody(UpstreamErrorType.InvalidInput, "The input was rejected"));
      return;
    }
    if (directives.policyInput) {
      res.status(422).json(errorBody(UpstreamErrorType.ContentPolicy, "The input violates the content policy"));
      return;
    }
    const job: Job = {
      id: `upj_${randomBytes(12).toString("hex")}`,
      model: body.model,
      endpoint: inferEndpoint(body.model),
      input: body.input,
      createdAt: now(),
      directives,
      canceled: false,
    };
    jobs.set(job.id, job);
    if (jobs.size > maxJobs) jobs.delete(jobs.keys().next().value as string);
    if (directives.hugeSubmit) return sendPaddedAnswer(res, 202, { id: job.id, status: UpstreamJobStatus.Running }, HUGE_ANSWER_BYTES);
    res.status(202).location(`/v1/jobs/${job.id}`).json({ id: job.id, status: UpstreamJobStatus.Running });
  });

  app.get("/v1/jobs/:id", (req, res) => {
    const job = jobs.get(req.params.id);
    if (!job) {
      res.status(404).json(errorBody(UpstreamErrorType.NotFound, "No such job"));
      return;
    }
    const padded = job.directives.pollAnswer;
    if (padded && !job.canceled) return sendPaddedAnswer(res, 200, view(job, baseOf(req)), padded === "huge" ? HUGE_ANSWER_BYTES : Infinity);
    res.json(view(job, baseOf(req)));
  });

  app.post("/v1/jobs/:id/cancel", (req, res) => {
    const job = jobs.get(req.params.id);
    if (!job) {
      res.status(404).json(errorBody(UpstreamErrorType.NotFound, "No such job"));
      return;
    }
    // Idempotent, and a job that has already finished keeps its outcome.
    if (!isDone(job)) job.canceled = true;
    res.json(view(job, baseOf(req)));
  });

  app.get("/files/:id/:name", (req, res) => {
    const job = jobs.get(req.params.id);
    const match = /^(\d{1,3})\.([a-z0-9]+)$/.exec(req.params.name);
    if (!job || !match || job.canceled || !isDone(job) || !MEDIA_ENDPOINTS.includes(job.endpoint)) {
      res.status(404).json(errorBody(UpstreamErrorType.NotFound, "No such file"));
      return;
    }
    if (job.directives.badFile) {
      res.status(job.directives.badFile).json(errorBody(UpstreamErrorType.BadFile, "Simulated file download failure"));
      return;
    }
    if (job.directives.redirectFile) {
      res.redirect(302, job.directives.redirectFile);
      return;
    }
    const file = resultOf(job).files?.[Number(match[1])];
    if (!file || file.extension !== match[2]) {
      res.status(404).json(errorBody(UpstreamErrorType.NotFound, "No such file"));
      return;
    }
    const data = job.directives.mislabel ? Buffer.from("<!doctype html><script>document.title='mislabelled'</script>") : file.data;
    res
      .set("Content-Type", job.directives.fileType ?? file.contentType)
      .set("Cache-Control", "no-store")
      .send(data);
  });

  app.use("/replicate/v1", createReplicateSim(options));
  app.use("/runway", createRunwaySim(options));

  app.use((_req, res) => {
    res.status(404).json(errorBody(UpstreamErrorType.NotFound, "Route not found"));
  });

  // Express 5 signature: four parameters mark the error handler.
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = isObject(error) && typeof error.status === "number" && error.status >= 400 && error.status < 500 ? error.status : 500;
    res
      .status(status)
      .json(
        errorBody(
          status < 500 ? UpstreamErrorType.InvalidInput : UpstreamErrorType.ServerError,
          status < 500 ? "The request could not be read" : "Internal error",
        ),
      );
  });

  return app;
}
