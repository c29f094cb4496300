import { createHash, randomUUID } from "node:crypto";
import { MEDIA_ENDPOINTS } from "@gen/domain";
import { FAL_REQUEST_ID_HEADER, type CompletedResult } from "@gen/providers";
import { simulateGeneration } from "@gen/simulator";
import express, { type Request, type Response } from "express";
import { HUGE_ANSWER_BYTES, sendPaddedAnswer } from "../padded-answer.ts";
import { runAt } from "../run-at.ts";
import { parseUpDirectives } from "../up-directives.ts";
import { type FalSimJob, isFinished, queueStatusOf } from "./fal-sim-job.ts";
import { falAppId, falEndpoint, simulatorParams } from "./fal-sim-params.ts";
import { falPolicyDetail, falResultAnswer, falValidationDetail, type FalSimAnswer } from "./fal-sim-result.ts";
import { sendFalWebhook } from "./fal-sim-webhook.ts";

export interface FalSimOptions {
  /** Base of the URLs it hands out (without the mount path); by default from each request's Host. */
  publicUrl?: string;
  /** Time every job takes, on top of `[[up:delay_ms=N]]`. Default 0. */
  defaultDelayMs?: number;
  now?: () => number;
  /** Requests kept in memory; the oldest are forgotten beyond this. */
  maxJobs?: number;
}

const CACHED_RESULTS = 32;
const RETRY_AFTER_SECONDS = 1;
const KEY_HEADER = /^Key \S+$/;

const STATUS_PATH = /^\/(.+)\/requests\/([^/]+)\/status$/;
const CANCEL_PATH = /^\/(.+)\/requests\/([^/]+)\/cancel$/;
const RESULT_PATH = /^\/(.+)\/requests\/([^/]+)$/;
const FILE_PATH = /^\/files\/([^/]+)\/(\d{1,3})\.([a-z0-9]+)$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * fal's queue API as its public reference documents it, for the fal adapter's tests and demos:
 * `POST {base}/{model id}` (`?fal_webhook=` for a callback), `GET {base}/{app}/requests/{id}/status`,
 * `GET {base}/{app}/requests/{id}`, `PUT {base}/{app}/requests/{id}/cancel`, `Authorization: Key …`,
 * results shaped per kind of model and webhooks POSTed when a request finishes. Outputs are the
 * simulated provider's, served as files; faults come from `[[up:…]]` directives in the input.
 */
export function createFalSim(options: FalSimOptions = {}): express.Router {
  const now = options.now ?? Date.now;
  const maxJobs = options.maxJobs ?? 10_000;
  const jobs = new Map<string, FalSimJob>();
  const results = new Map<string, CompletedResult>();
  const throttled = new Map<string, number>();

  function remember<V>(map: Map<string, V>, key: string, value: V, limit: number): void {
    map.set(key, value);
    if (map.size > limit) map.delete(map.keys().next().value as string);
  }

  function resultOf(job: FalSimJob): CompletedResult {
    let result = results.get(job.id);
    if (!result) {
      result = simulateGeneration({ endpoint: job.endpoint, model: job.model, params: simulatorParams(job.input) });
      remember(results, job.id, result, CACHED_RESULTS);
    }
    return result;
  }

  const baseOf = (req: Request) => `${(options.publicUrl ?? `${req.protocol}://${req.get("host") ?? "localhost"}`).replace(/\/$/, "")}${req.baseUrl}`;

  function answerOf(job: FalSimJob, base: string): FalSimAnswer {
    return falResultAnswer(
      job,
      () => resultOf(job),
      (index, extension) => `${base}/files/${job.id}/${index}.${extension}`,
    );
  }

  function urls(job: FalSimJob, base: string) {
    const request = `${base}/${falAppId(job.model)}/requests/${job.id}`;
    return { response_url: request, status_url: `${request}/status`, cancel_url: `${request}/cancel` };
  }

  function statusView(job: FalSimJob, base: string): Record<string, unknown> {
    const status = queueStatusOf(job, now());
    const view: Record<string, unknown> = { status, request_id: job.id, ...urls(job, base) };
    if (status === "IN_QUEUE") return { ...view, queue_position: 0 };
    if (status === "IN_PROGRESS") return { ...view, logs: null };
    return { ...view, logs: null, metrics: { inference_time: job.durationMs / 1000 } };
  }

  function findJob(req: Request, res: Response, app: string, id: string): FalSimJob | undefined {
    const job = jobs.get(id);
    if (!job || falAppId(job.model) !== app) {
      res.status(404).json({ detail: `Request ${id} not found` });
      return undefined;
    }
    return job;
  }

  function submit(req: Request, res: Response, model: string): void {
    const input: unknown = req.body;
    if (!isObject(input)) {
      res.status(422).json(falValidationDetail("body", "Input should be a valid dictionary"));
      return;
    }
    const directives = parseUpDirectives(input);
    // fal's submit carries no reference of ours: the same model and input count as the same job.
    if (directives.submit429 !== undefined) {
      const key = createHash("sha256")
        .update(`${model}\n${JSON.stringify(input)}`)
        .digest("base64url");
      const seen = throttled.get(key) ?? 0;
      if (seen < directives.submit429) {
        remember(throttled, key, seen + 1, maxJobs);
        res.status(429).set("Retry-After", String(RETRY_AFTER_SECONDS)).json({ detail: "Rate limit exceeded" });
        return;
      }
    }
    if (directives.submit500) {
      res.status(500).json({ detail: "Internal Server Error" });
      return;
    }
    if (directives.reject) {
      res.status(422).json(falValidationDetail("prompt", "The input was rejected"));
      return;
    }
    if (directives.policyInput) {
      res.status(422).json(falPolicyDetail("prompt"));
      return;
    }
    const webhook = typeof req.query.fal_webhook === "string" && req.query.fal_webhook !== "" ? req.query.fal_webhook : undefined;
    const job: FalSimJob = {
      id: randomUUID(),
      model,
      endpoint: falEndpoint(model),
      input,
      createdAt: now(),
      durationMs: (options.defaultDelayMs ?? 0) + (directives.delayMs ?? 0),
      directives,
      canceled: false,
      polls: 0,
      ...(webhook ? { webhookUrl: webhook } : {}),
    };
    remember(jobs, job.id, job, maxJobs);
    const base = baseOf(req);
    if (webhook && !directives.hang && !directives.callbackLost) {
      runAt(job.createdAt + job.durationMs + (directives.callbackDelayMs ?? 0), now, () => void sendFalWebhook(webhook, job.id, answerOf(job, base)));
    }
    const queued = { request_id: job.id, gateway_request_id: job.id, status: "IN_QUEUE", queue_position: 0, ...urls(job, base) };
    res.set(FAL_REQUEST_ID_HEADER, job.id);
    if (directives.hugeSubmit) return sendPaddedAnswer(res, 200, queued, HUGE_ANSWER_BYTES);
    res.json(queued);
  }

  const router = express.Router();

  router.get(FILE_PATH, (req, res) => {
    const [, id = "", index = "", extension = ""] = FILE_PATH.exec(req.path) ?? [];
    const job = jobs.get(id);
    const file = job && !job.canceled && isFinished(job, now()) && MEDIA_ENDPOINTS.includes(job.endpoint) ? resultOf(job).files?.[Number(index)] : undefined;
    if (!file || file.extension !== extension) {
      res.status(404).json({ detail: "File not found" });
      return;
    }
    res.set("Content-Type", file.contentType).set("Cache-Control", "no-store").send(file.data);
  });

  // Every queue call carries fal's key.
  router.use((req, res, next) => {
    if (KEY_HEADER.test(req.get("authorization") ?? "")) return next();
    res.status(401).json({ detail: "Authentication is required: Authorization: Key <FAL_KEY>" });
  });

  router.use((req, res, next) => {
    const status = req.method === "GET" ? STATUS_PATH.exec(req.path) : null;
    if (status) {
      const job = findJob(req, res, status[1] ?? "", status[2] ?? "");
      if (!job) return;
      job.polls++;
      if (job.directives.poll500 !== undefined && job.polls <= job.directives.poll500) {
        res.status(500).json({ detail: "Internal Server Error" });
        return;
      }
      const padded = job.directives.pollAnswer;
      if (padded && !job.canceled) return sendPaddedAnswer(res, 200, statusView(job, baseOf(req)), padded === "huge" ? HUGE_ANSWER_BYTES : Infinity);
      res.json(statusView(job, baseOf(req)));
      return;
    }
    const cancel = req.method === "PUT" ? CANCEL_PATH.exec(req.path) : null;
    if (cancel) {
      const job = findJob(req, res, cancel[1] ?? "", cancel[2] ?? "");
      if (!job) return;
      if (isFinished(job, now())) {
        res.status(400).json({ status: "ALREADY_COMPLETED" });
        return;
      }
      job.canceled = true;
      res.status(202).json({ status: "CANCELLATION_REQUESTED" });
      return;
    }
    const result = req.method === "GET" ? RESULT_PATH.exec(req.path) : null;
    if (result) {
      const job = findJob(req, res, result[1] ?? "", result[2] ?? "");
      if (!job) return;
      if (!isFinished(job, now())) {
        res.status(400).json({ detail: "Request is still in progress" });
        return;
      }
      const answer = answerOf(job, baseOf(req));
      res.status(answer.status).set(FAL_REQUEST_ID_HEADER, job.id).json(answer.body);
      return;
    }
    if (req.method === "POST" && req.path.length > 1 && !req.path.includes("/requests/")) return submit(req, res, req.path.slice(1));
    next();
  });

  return router;
}
