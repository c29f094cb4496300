import type { RequestHandler } from "express";
import { newRequestId } from "@gen/ids";

/** Every response carries X-Request-Id; error envelopes repeat it as request_id. */
export const requestId: RequestHandler = (_req, res, next) => {
  const id = newRequestId();
  res.locals.requestId = id;
  res.locals.startedAt = process.hrtime.bigint();
  res.setHeader("X-Request-Id", id);
  next();
};
