import { createHmac, randomBytes } from "node:crypto";
import { MEDIA_ENDPOINTS } from "@gen/domain";
import express, { type NextFunction, type Request, type Response } from "express";
import { inferEndpoint } from "../infer-endpoint.ts";
import { HUGE_ANSWER_BYTES, sendPaddedAnswer } from "../padded-answer.ts";
import { createProviderSimJobs, postWebhook, ratioToSize, type ProviderSimJob } from "../provider-sim-jobs.ts";
import { runAt } from "../run-at.ts";
import { parseUpDirectives } from "../up-directives.ts";

export interface ReplicateSimOptions {
  /** Base of the URLs it hands out; by default taken from each request's Host header. */
  publicUrl?: string;
  defaultDelayMs?: number;
  now?: () => number;
  maxJobs?: number;
  /** The only API token accepted; absent: any token. */
  token?: string;
  /** The signing secret of its webhooks (`whsec_` + base64), as GET /webhooks/default/secret answers it. */
  webhookSecret?: string;
}

interface Prediction extends ProviderSimJob {
  version: string;
  input: Record<string, unknown>;
  webhook?: string;
  webhookSent: boolean;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Replicate answers errors as problem JSON. */
function problem(res: Response, status: number, title: string, detail: string, extra: Json = {}): void {
  res
    .status(status)
    .type("application/problem+json")
    .send(JSON.stringify({ title, detail, status, ...extra }));
}

// The texts Replicate's models fail with, which the adapter reads (packages/providers/src/replicate/replicate-failure.ts).
const FAILURE = {
  policyOutput: "NSFW content detected. Try running it again, or try a different prompt.",
  policyInput: "The input or output was flagged as sensitive. Please try again with different inputs. (E005)",
  input: "Prediction input failed validation: num_outputs must be less than or equal to 4",
  failed: "Prediction failed: simulated upstream failure",
} as const;

/** Our parameters from a Replicate input, for simulateGeneration. */
function paramsOf(input: Json): Json {
  const params: Json = { ...input };
  if (input.num_outputs !== undefined) params.n = input.num_outputs;
  if (input.duration !== undefined) params.duration_seconds = input.duration;
  const size = ratioToSize(input.aspect_ratio);
  if (size) params.size = size;
  return params;
}

/**
 * Replicate's HTTP API as its reference documents it, for what the adapter uses: create a
 * prediction (`POST /models/{owner}/{name}/predictions`, or `POST /predictions` with a version),
 * read it (`GET /predictions/{id}`), cancel it (`POST /predictions/{id}/cancel`), with
 * `Authorization: Bearer` (or `Token`), prediction objects with `urls.get`/`urls.cancel`, and the
 * `completed` webhook POSTed, signed as Replicate signs it, when a prediction with a `webhook`
 * finishes. Outputs are simulateGeneration's, served from `/files`. Faults: `[[up:…]]` directives
 * (apps/upstream-sim/README.md).
 */
export function createReplicateSim(options: ReplicateSimOptions = {}): express.Router {
  const now = options.now ?? Date.now;
  const jobs = createProviderSimJobs({ now, defaultDelayMs: options.defaultDelayMs ?? 0, maxJobs: options.maxJobs ?? 10_000 });
  const secret = options.webhookSecret ?? `whsec_${randomBytes(24).toString("base64")}`;
  const base = (req: Request) => `${(options.publicUrl ?? `${req.protocol}://${req.get("host") ?? "localhost"}`).replace(/\/$/, "")}${req.baseUrl}`;

  function status(prediction: Prediction, justCreated: boolean): string {
    // Replicate answers a create with the prediction as it starts, however fast it will run.
    if (justCreated) return "starting";
    if (prediction.canceled) return "canceled";
    if (!jobs.isDone(prediction)) return jobs.isEarly(prediction) ? "starting" : "processing";
    const { directives } = prediction;
    return directives.policyOutput || directives.policyInput || directives.failInput || directives.fail ? "failed" : "succeeded";
  }

  function output(prediction: Prediction, root: string): unknown {
    if (prediction.directives.noUrls) return null;
    if (MEDIA_ENDPOINTS.includes(prediction.endpoint)) {
      const urls = jobs.fileUrls(prediction, `${root}/files`);
      // Image models answer a list of files, video and audio models a single one.
      return prediction.endpoint === "images" ? urls : urls[0];
    }
    const data = jobs.resultOf(prediction).data ?? {};
    // Language models stream their text as pieces; the others answer an object.
    if ((prediction.endpoint === "essay" || prediction.endpoint === "humanize") && typeof data.text === "string") return data.text.match(/\S+\s*/g) ?? [];
    return data;
  }

  /** A language model's token counts: the prompt's characters / 4 in, one per text piece out. */
  function languageTokens(prediction: Prediction): { input: number; output: number } | undefined {
    if (prediction.endpoint !== "essay" && prediction.endpoint !== "humanize") return undefined;
    const pieces = output(prediction, "");
    const prompt = String(prediction.input.prompt ?? prediction.input.text ?? "");
    return { input: Math.ceil(prompt.length / 4), output: Array.isArray(pieces) ? pieces.length : 0 };
  }

  function view(prediction: Prediction, root: string, justCreated = false): Json {
    const state = status(prediction, justCreated);
    const terminal = state === "succeeded" || state === "failed" || state === "canceled";
    const { directives } = prediction;
    const error =
      state !== "failed"
        ? null
        : directives.policyOutput
          ? FAILURE.policyOutput
          : directives.policyInput
            ? FAILURE.policyInput
            : directives.failInput
              ? FAILURE.input
              : FAILURE.failed;
    const tokens = state === "succeeded" ? languageTokens(prediction) : undefined;
    return {
      id: prediction.id,
      model: prediction.model,
      version: prediction.version,
      input: prediction.input,
      logs: "",
      output: state === "succeeded" ? output(prediction, root) : null,
      data_removed: false,
      error,
      status: state,
      source: "api",
      created_at: new Date(prediction.createdAt).toISOString(),
      started_at: state === "starting" ? null : new Date(prediction.createdAt).toISOString(),
      completed_at: terminal ? new Date(Math.min(now(), jobs.doneAt(prediction))).toISOString() : null,
      urls: {
        get: `${root}/predictions/${prediction.id}`,
        cancel: `${root}/predictions/${prediction.id}/cancel`,
        web: `https://replicate.com/p/${prediction.id}`,
      },
      metrics: {
        ...(terminal ? { predict_time: (jobs.doneAt(prediction) - prediction.createdAt) / 1000 } : {}),
        ...(tokens ? { input_token_count: tokens.input, output_token_count: tokens.output } : {}),
      },
      ...(prediction.webhook ? { webhook: prediction.webhook, webhook_events_filter: ["completed"] } : {}),
    };
  }

  /** Sends the `completed` webhook, signed per Standard Webhooks as Replicate does, once. */
  function sendCompleted(prediction: Prediction, root: string): void {
    if (!prediction.webhook || prediction.webhookSent || prediction.directives.callbackLost) return;
    prediction.webhookSent = true;
    const body = JSON.stringify(view(prediction, root));
    const id = `msg_${randomBytes(12).toString("hex")}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
    const signature = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
    postWebhook(prediction.webhook, body, { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` });
  }

  function scheduleCompleted(prediction: Prediction, root: string): void {
    if (!prediction.webhook || prediction.directives.hang || prediction.directives.callbackLost) return;
    runAt(jobs.doneAt(prediction) + (prediction.directives.callbackDelayMs ?? 0), now, () => {
      if (!prediction.canceled) sendCompleted(prediction, root);
    });
  }

  function create(req: Request, res: Response, model: string, version: string): void {
    const body: unknown = req.body;
    if (!isObject(body) || !isObject(body.input)) return problem(res, 422, "Input validation failed", "- input: Invalid type. Expected: object");
    const webhook = body.webhook;
    if (webhook !== undefined && (typeof webhook !== "string" || !URL.canParse(webhook)))
      return problem(res, 422, "Invalid webhook", "- webhook: Does not match format 'uri'");
    const directives = parseUpDirectives(body.input);
    if (jobs.throttle(`submit:${JSON.stringify(body.input)}`, directives.submit429)) {
      const seconds = directives.retryAfterSeconds ?? 1;
      res.set("Retry-After", String(seconds));
      return problem(res, 429, "Request was throttled", `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? "" : "s"}.`);
    }
    if (directives.submit500) return problem(res, 500, "Internal Server Error", "Simulated upstream outage");
    if (directives.reject)
      return problem(res, 422, "Input validation failed", "- input.prompt: Does not match format", {
        invalid_fields: [{ type: "format", field: "input.prompt", description: "Does not match format" }],
      });
    const prediction: Prediction = {
      id: randomBytes(13).toString("hex").slice(0, 26),
      model,
      version,
      endpoint: inferEndpoint(model === "" ? version : model),
      input: body.input,
      params: paramsOf(body.input),
      createdAt: now(),
      directives,
      canceled: false,
      polls: 0,
      webhookSent: false,
      ...(typeof webhook === "string" ? { webhook } : {}),
    };
    jobs.add(prediction);
    const root = base(req);
    scheduleCompleted(prediction, root);
    if (directives.hugeSubmit) return sendPaddedAnswer(res, 201, view(prediction, root, true), HUGE_ANSWER_BYTES);
    res.status(201).json(view(prediction, root, true));
  }

  const router = express.Router();
  router.get("/files/:id/:name", (req, res) => jobs.serveFile(req, res, (r) => problem(r, 404, "Not found", "No such file")));

  router.use((req: Request, res: Response, next: NextFunction) => {
    const match = /^(?:Bearer|Token) (\S+)$/.exec(req.get("authorization") ?? "");
    if (!match || (options.token !== undefined && match[1] !== options.token))
      return problem(res, 401, "Unauthenticated", "You did not pass a valid authentication token");
    next();
  });

  router.get("/webhooks/default/secret", (_req, res) => {
    res.json({ key: secret });
  });

  router.post("/models/:owner/:name/predictions", (req, res) => create(req, res, `${req.params.owner}/${req.params.name}`, "hidden"));

  router.post("/predictions", (req, res) => {
    const version: unknown = isObject(req.body) ? req.body.version : undefined;
    if (typeof version !== "string" || version === "") return problem(res, 422, "Input validation failed", "- version: Required");
    // `owner/name:id` names the model too; a bare version id does not.
    const colon = version.indexOf(":");
    create(req, res, colon >= 0 ? version.slice(0, colon) : "", colon >= 0 ? version.slice(colon + 1) : version);
  });

  router.get("/predictions/:id", (req, res) => {
    const prediction = jobs.get(req.params.id) as Prediction | undefined;
    if (!prediction) return problem(res, 404, "Not found", "The requested resource could not be found.");
    prediction.polls += 1;
    const { directives } = prediction;
    if (jobs.throttle(`poll:${prediction.id}`, directives.pollRateLimit)) {
      res.set("Retry-After", String(directives.retryAfterSeconds ?? 1));
      return problem(res, 429, "Request was throttled", "Request was throttled.");
    }
    if (directives.poll500 !== undefined && prediction.polls <= directives.poll500)
      return problem(res, 500, "Internal Server Error", "Simulated upstream outage");
    const root = base(req);
    if (directives.pollAnswer && !prediction.canceled)
      return sendPaddedAnswer(res, 200, view(prediction, root), directives.pollAnswer === "huge" ? HUGE_ANSWER_BYTES : Infinity);
    res.json(view(prediction, root));
  });

  router.post("/predictions/:id/cancel", (req, res) => {
    const prediction = jobs.get(req.params.id) as Prediction | undefined;
    if (!prediction) return problem(res, 404, "Not found", "The requested resource could not be found.");
    const root = base(req);
    // A prediction that has already finished keeps its outcome; cancelling twice changes nothing.
    if (!prediction.canceled && !jobs.isDone(prediction)) {
      prediction.canceled = true;
      sendCompleted(prediction, root);
    }
    res.json(view(prediction, root));
  });

  router.use((_req, res) => problem(res, 404, "Not found", "The requested resource could not be found."));
  return router;
}
