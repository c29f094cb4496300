import type { IncomingMessage, ServerResponse } from "node:http";
import type { Express, Request, Response } from "express";
import { ApiError, Err } from "@gen/errors";
import type { Logger } from "@gen/logger";
import { context, requestId, sendError } from "@gen/http";

/**
 * The app as the server's request listener, with `lastResort` as its final handler (the third
 * argument Express takes when an app is called as a function). Express's router gives up on a
 * request target it cannot parse (an absolute form with a broken host: `GET http://[::1/x
 * HTTP/1.1`) before any middleware runs, and its default final handler answers an HTML 404
 * without a request id. Such a target names no route of ours, so it gets 404/40002 in the envelope
 * like any unknown route. Found by the fault suite's fuzzer.
 */
export function withLastResort(app: Express, logger: Logger): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => app(req as Request, res as Response, (error?: unknown) => lastResort(req as Request, res as Response, error, logger));
}

function lastResort(req: Request, res: Response, error: unknown, logger: Logger): void {
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
