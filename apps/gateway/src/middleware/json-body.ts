import express, { type RequestHandler } from "express";
import { ApiError } from "@gen/errors";

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

const readRaw = express.raw({ type: () => true, limit: "1mb" });

/**
 * Reads the body only after auth and rate limiting passed. Over 1 MiB: 413/20008. Anything that is
 * not a JSON object sent as JSON (wrong type, bad syntax, array, scalar): 20001.
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  readRaw(req, res, (error?: unknown) => {
    if (error) {
      const type = (error as { type?: string }).type;
      return next(type === "entity.too.large" ? new ApiError(20008) : new ApiError(20001, "Body could not be read as JSON"));
    }
    if (!JSON_TYPE.test(req.headers["content-type"] ?? "")) {
      return next(new ApiError(20001, "Body is not a JSON object: Content-Type must be application/json"));
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString("utf8") : "");
    } catch {
      return next(new ApiError(20001, "Body is not a JSON object: malformed JSON"));
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return next(new ApiError(20001));
    }
    req.body = parsed;
    next();
  });
};
