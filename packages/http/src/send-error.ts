import type { Response } from "express";
import type { ApiError } from "@gen/errors";
import { context } from "./request-context.ts";

export function sendError(res: Response, error: ApiError): void {
  res.set(error.headers);
  res.status(error.status).json({ error: { code: error.code, message: error.message, request_id: context(res).requestId } });
}
