import type { Express, NextFunction, Request, Response } from "express";
import { ApiError, Err } from "@gen/errors";
import type { Logger } from "@gen/logger";
import { context, requestId, sendError } from "@gen/http";

type Handle = (req: Request, res: Response, done?: NextFunction) => void;

/**
 * Express's router gives up on a request target it cannot parse (an absolute form with a broken
 * host: `GET http://[::1/x HTTP/1.1`) before any middleware runs, and its default final handler
 * answers an HTML 404 without a request id. Such a target names no route of ours, so it gets
 * 404/40002 in the envelope like any unknown route. Found by the fault suite's fuzzer.
 */
export function answerUnparseableTargets(app: Express, logger: Logger): void {
  // `handle` is how the app dispatches (Express 4 and 5); only the top-level call lacks `done`.
  const dispatch = app as unknown as { handle: Handle };
  const handle = dispatch.handle.bind(app);
  dispatch.handle = (req, res, done) => handle(req, res, done ?? ((error?: unknown) => lastResort(req, res, error, logger)));
}

export function lastResort(req: Request, res: Response, error: unknown, logger: Logger): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  requestId(req, res, () => {
    // Only an error handler that threw gets here with an error; the router's give-up has none.
    if (error === undefined) return sendError(res, new ApiError(Err.RouteNotFound));
    logger.error("unhandled error after the error handler", { request_id: context(res).requestId, method: req.method, err: error });
    sendError(res, new ApiError(Err.Internal));
  });
}
