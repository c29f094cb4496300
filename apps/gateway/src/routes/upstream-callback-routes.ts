import type { IncomingMessage } from "node:http";
import { Router, type NextFunction, type Request } from "express";
import { ApiError, Err } from "@gen/errors";
import { taskOfCallbackToken } from "@gen/ids";
import { signalUpstreamCallback } from "@gen/queues";
import type { GatewayDeps } from "../services/gateway-deps.ts";

/** A provider's webhook is a small JSON document; anything longer is refused, unread. */
const MAX_CALLBACK_BODY_BYTES = 64 * 1024;

const TOO_LARGE = "Request body exceeds 64 KiB";

/**
 * POST /upstream-callbacks/<token>: a provider says a task's upstream job has finished. Only the
 * token is believed (the task id and its HMAC, UPSTREAM_CALLBACK_SECRET): the body is read up to
 * 64 KiB and dropped, never parsed, so a forged or replayed callback can at most make the task's
 * next poll run now. An unknown token is an unknown route (404); a body over the cap is 413 at
 * once, its rest unread (the connection is closed). Served only with UPSTREAM_CALLBACK_URL set.
 */
export function upstreamCallbackRoutes(deps: GatewayDeps): Router {
  const router = Router();
  const callbacks = deps.config.upstreamCallback;
  if (!callbacks) return router;
  router.post("/upstream-callbacks/:token", (req, res, next) => {
    const taskId = taskOfCallbackToken(callbacks.secret, String(req.params.token));
    if (taskId === undefined) return refuse(req, next, new ApiError(Err.RouteNotFound));
    if (declaredLength(req) > MAX_CALLBACK_BODY_BYTES) return refuse(req, next, new ApiError(Err.BodyTooLarge, TOO_LARGE));
    dropBody(req, MAX_CALLBACK_BODY_BYTES, (outcome) => {
      if (outcome === "too-large") return refuse(req, next, new ApiError(Err.BodyTooLarge, TOO_LARGE));
      // The client went away: nothing to answer, and nothing it asked for is believed.
      if (outcome === "aborted") return;
      signalUpstreamCallback(deps.redis, deps.generationQueue, deps.config.queuePrefix, taskId).then(
        () => res.status(204).end(),
        // Redis away: the provider retries a failed webhook; the task's safety poll runs anyway.
        (error: unknown) => {
          deps.logger.warn("upstream callback not passed on", { task_id: taskId, err: error });
          next(new ApiError(Err.WorkflowUnavailable));
        },
      );
    });
  });
  return router;
}

/** Content-Length, or 0 when absent (a chunked body is counted as it arrives). */
function declaredLength(req: IncomingMessage): number {
  const header = req.headers["content-length"];
  return header !== undefined && /^\d+$/.test(header) ? Number(header) : 0;
}

/** Answers with `error`; a body not read to its end is not read further: the connection closes after the answer. */
function refuse(req: Request, next: NextFunction, error: ApiError): void {
  const closing = req.complete ? error : new ApiError(error.code, error.message, { ...error.headers, Connection: "close" });
  next(closing);
}

type Dropped = "read" | "too-large" | "aborted";

/** Reads the body to its end and drops it, or stops at `max` bytes. */
function dropBody(req: Request, max: number, done: (outcome: Dropped) => void): void {
  let received = 0;
  let settled = false;
  const finish = (outcome: Dropped) => {
    if (settled) return;
    settled = true;
    req.removeListener("data", onData);
    req.removeListener("end", onEnd);
    req.removeListener("aborted", onAborted);
    req.removeListener("error", onAborted);
    if (outcome === "too-large") req.pause();
    done(outcome);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > max) finish("too-large");
  };
  const onEnd = () => finish("read");
  const onAborted = () => finish("aborted");
  req.on("data", onData);
  req.once("end", onEnd);
  req.once("aborted", onAborted);
  req.once("error", onAborted);
}
