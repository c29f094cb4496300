import type { Request, Response } from "express";

/** Per-request values set by middleware; kept on res.locals so handlers stay typed. */
export interface RequestContext {
  requestId: string;
  userId?: string;
  /** The task the request created or named (submission, poll, cancel), for its log line. */
  taskId?: string;
  startedAt: bigint;
}

export const context = (res: Response): RequestContext => res.locals as RequestContext;

const CALLBACK_PREFIX = "/upstream-callbacks/";

/**
 * The path without its query string: query strings may hold secrets and are never logged. Nor is
 * an upstream callback token's MAC: the line keeps the task id it names.
 */
export const pathOf = (req: Request): string => {
  const query = req.originalUrl.indexOf("?");
  const path = query === -1 ? req.originalUrl : req.originalUrl.slice(0, query);
  if (!path.startsWith(CALLBACK_PREFIX)) return path;
  const dot = path.indexOf(".", CALLBACK_PREFIX.length);
  return dot === -1 ? path : `${path.slice(0, dot)}.<mac>`;
};
