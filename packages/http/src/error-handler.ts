import type { ErrorRequestHandler } from "express";
import { isDatabaseUnavailable } from "@gen/db";
import { ApiError, Err } from "@gen/errors";
import type { Logger } from "@gen/logger";
import { context, pathOf } from "./request-context.ts";
import { assignRequestId } from "./request-id.ts";
import { sendError } from "./send-error.ts";

/** Maps every thrown error through the catalog. Internal details go to the log, never to the client. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    assignRequestId(res);
    if (error instanceof ApiError) return sendError(res, error);
    if (isDatabaseUnavailable(error)) {
      logger.warn("database unavailable", { request_id: context(res).requestId, task_id: context(res).taskId, err: String(error) });
      return sendError(res, new ApiError(Err.DatabaseUnavailable));
    }
    const type = (error as { type?: string })?.type;
    if (type === "entity.too.large") return sendError(res, new ApiError(Err.BodyTooLarge));
    if (type === "entity.parse.failed") return sendError(res, new ApiError(Err.BodyNotObject));
    // A path segment with broken percent-encoding (`/api/v1/tasks/%zz`) names no route of ours.
    if (error instanceof URIError) return sendError(res, new ApiError(Err.RouteNotFound));
    logger.error("unhandled error", { request_id: context(res).requestId, task_id: context(res).taskId, method: req.method, path: pathOf(req), err: error });
    sendError(res, new ApiError(Err.Internal));
  };
}
