import type { RequestHandler } from "express";
import type { Database } from "@gen/db";
import { authenticateKey } from "../services/authenticate-key.ts";

export function authenticate(db: Database): RequestHandler {
  return async (req, res, next) => {
    const { userId } = await authenticateKey(db, req.headers.authorization);
    res.locals.userId = userId;
    next();
  };
}
