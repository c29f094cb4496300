import express, { type RequestHandler } from "express";
import { ApiError, Err } from "@gen/errors";
import { MAX_BODY_DEPTH, MAX_BODY_ITEMS, jsonShapeProblem, startsAsObject } from "../http/json-shape.ts";

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

const readRaw = express.raw({ type: () => true, limit: "1mb" });

const TOO_DEEP = `Invalid request body: arrays and objects nested more than ${MAX_BODY_DEPTH} levels deep`;
const TOO_MANY = `Invalid request body: more than ${MAX_BODY_ITEMS} array items and object members in all`;

/**
 * Reads the body only after auth and rate limiting passed. Over 1 MiB: 413/20008. Anything that is
 * not a JSON object sent as JSON (wrong type, bad syntax, array, scalar): 20001. An object nested
 * too deep or holding too many items (json-shape.ts) is refused unparsed with 20003: no valid
 * submission comes near either limit, and parsing and checking such a body held the event loop.
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  readRaw(req, res, (error?: unknown) => {
    if (error) {
      const type = (error as { type?: string }).type;
      return next(type === "entity.too.large" ? new ApiError(Err.BodyTooLarge) : new ApiError(Err.BodyNotObject, "Body could not be read as JSON"));
    }
    if (!JSON_TYPE.test(req.headers["content-type"] ?? "")) {
      return next(new ApiError(Err.BodyNotObject, "Body is not a JSON object: Content-Type must be application/json"));
    }
    const text = Buffer.isBuffer(req.body) ? req.body.toString("utf8") : "";
    const problem = jsonShapeProblem(text);
    if (problem !== null) {
      // Whatever else is wrong with it, a body that does not start as an object is not one.
      if (!startsAsObject(text)) return next(new ApiError(Err.BodyNotObject));
      return next(new ApiError(Err.ParameterInvalid, problem === "depth" ? TOO_DEEP : TOO_MANY));
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return next(new ApiError(Err.BodyNotObject, "Body is not a JSON object: malformed JSON"));
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      return next(new ApiError(Err.BodyNotObject));
    }
    req.body = parsed;
    next();
  });
};
