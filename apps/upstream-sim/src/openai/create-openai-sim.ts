import express, { type NextFunction, type Request, type Response } from "express";
import { createOpenAISimContext } from "./openai-sim-context.ts";
import { mountImages } from "./openai-sim-images.ts";
import { mountModerations } from "./openai-sim-moderations.ts";
import { mountResponses } from "./openai-sim-responses.ts";
import { mountVideos } from "./openai-sim-videos.ts";
import { OpenAIErrorType, isObject, openAIId, sendError } from "./openai-sim-wire.ts";

/** The key the simulator accepts unless told another: `Authorization: Bearer sk-sim`. */
export const OPENAI_SIM_API_KEY = "sk-sim";

export interface OpenAISimOptions {
  apiKey?: string;
  /** Base of the image URLs it hands out; by default taken from each request's Host header. */
  publicUrl?: string;
  /** Time every background job takes before it finishes, on top of `[[up:delay_ms=N]]`. Default 0. */
  defaultDelayMs?: number;
  now?: () => number;
  /** Jobs kept in memory per API; the oldest are forgotten beyond this. */
  maxJobs?: number;
}

/**
 * OpenAI's Images, Moderations, Responses and Videos APIs as their reference documents them
 * (paths under `/v1`, bearer key, `x-request-id`, `{error: {message, type, param, code}}`), with
 * the `[[up:…]]` fault injection, answering from the simulated provider's outputs. Mounted under
 * a prefix, the SDK's `baseURL` is `<prefix>/v1`.
 */
export function createOpenAISim(options: OpenAISimOptions = {}): express.Router {
  const apiKey = options.apiKey ?? OPENAI_SIM_API_KEY;
  const context = createOpenAISimContext(options);
  const router = express.Router();

  router.use((req, res, next) => {
    res.set("x-request-id", openAIId("req_"));
    // Image URLs stand for OpenAI's storage, which needs no key.
    if (req.path.startsWith("/files/") || req.get("authorization") === `Bearer ${apiKey}`) return next();
    sendError(res, 401, OpenAIErrorType.InvalidRequest, "Incorrect API key provided.", { code: "invalid_api_key" });
  });
  router.use(express.json({ limit: "4mb" }));

  mountImages(router, context);
  mountModerations(router, context);
  mountResponses(router, context);
  mountVideos(router, context);

  router.use((req, res) => {
    sendError(res, 404, OpenAIErrorType.InvalidRequest, `Invalid URL (${req.method} ${req.path})`);
  });
  // Express 5 signature: four parameters mark the error handler.
  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = isObject(error) && typeof error.status === "number" && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status < 500) sendError(res, status, OpenAIErrorType.InvalidRequest, "We could not parse the body of your request.");
    else sendError(res, 500, OpenAIErrorType.Server, "The server had an error while processing your request.");
  });
  return router;
}
