import type { RequestHandler } from "express";
import type { Logger } from "@gen/logger";
import { context, pathOf } from "./request-context.ts";

/** One JSON line per request. Never the body, the Authorization header or the query string. */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    // At LOG_LEVEL=warn or above the line would be built, formatted and then dropped by winston.
    if (!logger.isInfoEnabled()) return next();
    res.on("finish", () => {
      const ctx = context(res);
      logger.info("request", {
        request_id: ctx.requestId,
        user_id: ctx.userId ?? null,
        task_id: ctx.taskId ?? null,
        method: req.method,
        path: pathOf(req),
        status: res.statusCode,
        duration_ms: Number(process.hrtime.bigint() - ctx.startedAt) / 1e6,
      });
    });
    next();
  };
}
