import type { Request, Response } from "express";
import type { UpDirectives } from "../up-directives.ts";
import { OpenAIErrorType, inputKey, sendError } from "./openai-sim-wire.ts";

const RATE_LIMIT_KEYS = 1000;

export interface OpenAISimContext {
  now: () => number;
  /** Time every background job takes, on top of `[[up:delay_ms=N]]`. */
  defaultDelayMs: number;
  publicUrl?: string;
  maxJobs: number;
  /**
   * The faults every creating call shares, answered here: 429 with Retry-After, 500, 400 invalid,
   * 400 content policy. True when it answered and the route must stop.
   */
  refuse(req: Request, res: Response, directives: UpDirectives, policyCode: string): boolean;
}

/** Keeps at most `max` entries: the oldest go first, as a busy upstream forgets old jobs. */
export function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as string);
}

export function createOpenAISimContext(options: { now?: () => number; defaultDelayMs?: number; publicUrl?: string; maxJobs?: number }): OpenAISimContext {
  const rateLimited = new Map<string, number>();
  return {
    now: options.now ?? Date.now,
    defaultDelayMs: options.defaultDelayMs ?? 0,
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
    maxJobs: options.maxJobs ?? 10_000,
    refuse(req, res, directives, policyCode) {
      if (directives.submit429 !== undefined) {
        const key = inputKey(req.path, req.body);
        const seen = rateLimited.get(key) ?? 0;
        if (seen < directives.submit429) {
          remember(rateLimited, key, seen + 1, RATE_LIMIT_KEYS);
          res.set("retry-after", "1");
          sendError(res, 429, OpenAIErrorType.RateLimit, "Rate limit reached for requests. Please try again in 1s.", { code: "rate_limit_exceeded" });
          return true;
        }
      }
      if (directives.submit500) {
        sendError(res, 500, OpenAIErrorType.Server, "The server had an error while processing your request. Sorry about that!");
        return true;
      }
      if (directives.reject) {
        sendError(res, 400, OpenAIErrorType.InvalidRequest, "Invalid value for the request's input.", { code: "invalid_value", param: "input" });
        return true;
      }
      if (directives.policyInput) {
        sendError(res, 400, OpenAIErrorType.InvalidRequest, "Your request was rejected as a result of our safety system.", { code: policyCode });
        return true;
      }
      return false;
    },
  };
}
