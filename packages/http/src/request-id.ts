import type { RequestHandler, Response } from "express";
import { newRequestId } from "@gen/ids";

/** Every response carries X-Request-Id; error envelopes repeat it as request_id. */
export const requestId: RequestHandler = (_req, res, next) => {
  assignRequestId(res);
  next();
};

/**
 * Gives the response its request id unless it has one. The error handler calls it too: a target
 * the router fails on before any layer of ours ran (a poll path with broken percent-encoding fails
 * at the first route's match) reaches it without one.
 */
export function assignRequestId(res: Response): void {
  if (res.locals.requestId !== undefined) return;
  const id = newRequestId();
  res.locals.requestId = id;
  res.locals.startedAt = process.hrtime.bigint();
  res.setHeader("X-Request-Id", id);
}
