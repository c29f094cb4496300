import { simulateGeneration } from "@gen/simulator";
import express, { type Router } from "express";
import { HUGE_ANSWER_BYTES, sendPaddedAnswer } from "../padded-answer.ts";
import { parseUpDirectives, type UpDirectives } from "../up-directives.ts";
import { readMultipart } from "./openai-sim-body.ts";
import { remember, type OpenAISimContext } from "./openai-sim-context.ts";
import { OpenAIErrorType, isObject, openAIId, sendError, unixSeconds } from "./openai-sim-wire.ts";

const SECONDS = ["4", "8", "12"];
const SIZES = ["720x1280", "1280x720", "1024x1792", "1792x1024"];

interface VideoJob {
  id: string;
  model: string;
  prompt: string;
  seconds: string;
  size: string;
  createdAt: number;
  directives: UpDirectives;
}

/**
 * `POST /v1/videos` (multipart, as the SDK sends it, or JSON), `GET /v1/videos/{id}` (queued,
 * in_progress, completed or failed), `GET /v1/videos/{id}/content` (the MP4) and
 * `DELETE /v1/videos/{id}`, as the Videos API reference shows them.
 */
export function mountVideos(router: Router, context: OpenAISimContext): void {
  const jobs = new Map<string, VideoJob>();

  const isDone = (job: VideoJob) => !job.directives.hang && context.now() >= job.createdAt + context.defaultDelayMs + (job.directives.delayMs ?? 0);

  function view(job: VideoJob): Record<string, unknown> {
    const head = {
      id: job.id,
      object: "video",
      model: job.model,
      prompt: job.prompt,
      seconds: job.seconds,
      size: job.size,
      created_at: unixSeconds(job.createdAt),
      completed_at: null,
      expires_at: null,
      remixed_from_video_id: null,
      error: null,
    };
    if (!isDone(job)) return { ...head, status: job.createdAt === context.now() ? "queued" : "in_progress", progress: 50 };
    if (job.directives.policyOutput)
      return { ...head, status: "failed", progress: 100, error: { code: "moderation_blocked", message: "The video was blocked by our moderation system." } };
    if (job.directives.fail) return { ...head, status: "failed", progress: 100, error: { code: "internal_error", message: "Video generation failed." } };
    const done = unixSeconds(context.now());
    return { ...head, status: "completed", progress: 100, completed_at: done, expires_at: done + 3600 };
  }

  const notFound = (res: express.Response, id: string) =>
    sendError(res, 404, OpenAIErrorType.InvalidRequest, `Video with id '${id}' not found.`, { param: "video_id" });

  router.post("/v1/videos", express.raw({ type: "multipart/form-data", limit: "8mb" }), readMultipart, (req, res) => {
    const body: unknown = req.body;
    if (!isObject(body) || typeof body.prompt !== "string" || body.prompt === "") {
      sendError(res, 400, OpenAIErrorType.InvalidRequest, "Missing required parameter: 'prompt'.", { code: "missing_required_parameter", param: "prompt" });
      return;
    }
    const seconds = body.seconds ?? "4";
    const size = body.size ?? "720x1280";
    if (typeof seconds !== "string" || !SECONDS.includes(seconds)) {
      sendError(res, 400, OpenAIErrorType.InvalidRequest, `Invalid value: '${String(seconds)}'. Supported values are: ${SECONDS.join(", ")}.`, {
        code: "invalid_value",
        param: "seconds",
      });
      return;
    }
    if (typeof size !== "string" || !SIZES.includes(size)) {
      sendError(res, 400, OpenAIErrorType.InvalidRequest, `Invalid value: '${String(size)}'. Supported values are: ${SIZES.join(", ")}.`, {
        code: "invalid_value",
        param: "size",
      });
      return;
    }
    const reference = body.input_reference;
    if (reference !== undefined && !(isObject(reference) && (typeof reference.image_url === "string" || typeof reference.bytes === "number"))) {
      sendError(res, 400, OpenAIErrorType.InvalidRequest, "Invalid 'input_reference'.", { code: "invalid_value", param: "input_reference" });
      return;
    }
    const directives = parseUpDirectives(body);
    if (context.refuse(req, res, directives, "moderation_blocked")) return;
    const job: VideoJob = {
      id: openAIId("video_"),
      model: typeof body.model === "string" ? body.model : "sora-2",
      prompt: body.prompt,
      seconds,
      size,
      createdAt: context.now(),
      directives,
    };
    remember(jobs, job.id, job, context.maxJobs);
    if (directives.hugeSubmit) return sendPaddedAnswer(res, 200, view(job), HUGE_ANSWER_BYTES);
    res.json(view(job));
  });

  router.get("/v1/videos/:id", (req, res) => {
    const job = jobs.get(req.params.id);
    if (!job) return notFound(res, req.params.id);
    const padded = job.directives.pollAnswer;
    if (padded) return sendPaddedAnswer(res, 200, view(job), padded === "huge" ? HUGE_ANSWER_BYTES : Infinity);
    res.json(view(job));
  });

  router.get("/v1/videos/:id/content", (req, res) => {
    const job = jobs.get(req.params.id);
    if (!job) return notFound(res, req.params.id);
    if (view(job).status !== "completed") {
      sendError(res, 400, OpenAIErrorType.InvalidRequest, "Video is not ready yet.", { code: "video_not_ready", param: "video_id" });
      return;
    }
    const [file] =
      simulateGeneration({ endpoint: "videos", model: job.model, params: { prompt: job.prompt, size: job.size, duration_seconds: Number(job.seconds) } })
        .files ?? [];
    if (!file) return notFound(res, req.params.id);
    res.set("Content-Type", "video/mp4").set("Cache-Control", "no-store").send(file.data);
  });

  router.delete("/v1/videos/:id", (req, res) => {
    if (!jobs.delete(req.params.id)) return notFound(res, req.params.id);
    res.json({ id: req.params.id, object: "video.deleted", deleted: true });
  });
}
