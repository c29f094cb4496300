import type { Request, Response } from "express";

/** Per-request values set by middleware; kept on res.locals so handlers stay typed. */
export interface RequestContext {
  requestId: string;
  userId?: string;
  startedAt: bigint;
}

export const context = (res: Response): RequestContext => res.locals as RequestContext;

/** The path without its query string: query strings may hold secrets and are never logged. */
export const pathOf = (req: Request): string => {
  const query = req.originalUrl.indexOf("?");
  return query === -1 ? req.originalUrl : req.originalUrl.slice(0, query);
};
