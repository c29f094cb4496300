import type { RequestHandler } from "express";

/** Set before the handler runs, so every answer under the mount carries it, 404s included. */
export const noSniff: RequestHandler = (_req, res, next) => {
  res.setHeader("X-Content-Type-Options", "nosniff");
  next();
};
