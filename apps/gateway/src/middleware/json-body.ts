import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import express, { type RequestHandler } from "express";
import { ApiError, Err } from "@gen/errors";
import { MAX_BODY_DEPTH, MAX_BODY_ITEMS, jsonShapeProblem, startsAsObject } from "../http/json-shape.ts";

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

const BODY_LIMIT = 1024 * 1024;
const readRaw = express.raw({ type: () => true, limit: BODY_LIMIT });

const TOO_DEEP = `Invalid request body: arrays and objects nested more than ${MAX_BODY_DEPTH} levels deep`;
const TOO_MANY = `Invalid request body: more than ${MAX_BODY_ITEMS} array items and object members in all`;

/**
 * Reads the body only after auth and rate limiting passed. Over 1 MiB: 413/20008. Anything that is
 * not a JSON object sent as JSON (wrong type, bad syntax, array, scalar): 20001. An object nested
 * too deep or holding too many items (json-shape.ts) is refused unparsed with 20003: no valid
 * submission comes near either limit, and parsing and checking such a body held the event loop.
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  const onRead = (error?: unknown) => {
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
  };
  const length = plainLength(req.headers);
  if (length === undefined) return readRaw(req, res, onRead);
  if (!isBuffered(req, length)) return readPlain(req, length, onRead);
  const body: unknown = req.read();
  if (!Buffer.isBuffer(body) || body.length !== length) return onRead(new Error("request size did not match content length"));
  req.body = body;
  onRead();
};

/**
 * Whether the whole plain body is already here: a submission's few hundred bytes come in the
 * packet that carried its headers, and the HTTP parser has buffered them (and ended the stream,
 * having counted Content-Length bytes) by the time auth and the limiter answered. Then one
 * `read()` takes them, without readPlain's listeners and the stream's `data`/`end` events: about
 * 2 % of the gateway's CPU per submission. A body still arriving
 * takes the listener path.
 */
function isBuffered(req: IncomingMessage, length: number): boolean {
  return req.complete && req.readableLength === length && req.readableFlowing !== true;
}

/**
 * The body's length when it is the plain case a submission is: a Content-Length within the limit,
 * no Transfer-Encoding, no Content-Encoding. Everything else (chunked, compressed, empty, too
 * large) goes through body-parser, which answers each of them as before.
 */
function plainLength(headers: IncomingHttpHeaders): number | undefined {
  if (headers["transfer-encoding"] !== undefined || headers["content-encoding"] !== undefined) return undefined;
  const header = headers["content-length"];
  if (header === undefined || !/^[0-9]{1,7}$/.test(header)) return undefined;
  const length = Number(header);
  return length > 0 && length <= BODY_LIMIT ? length : undefined;
}

/**
 * The plain case read with two listeners, as body-parser's raw reader would read it (same Buffer
 * in `req.body`, same errors: an aborted or short body is "could not be read"): its stream and
 * error machinery was ~4.5 % of the gateway's CPU per submission.
 */
function readPlain(req: IncomingMessage & { body?: unknown }, length: number, done: (error?: unknown) => void): void {
  let first: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let received = 0;
  let settled = false;
  const finish = (error?: unknown) => {
    if (settled) return;
    settled = true;
    req.removeListener("data", onData);
    req.removeListener("end", onEnd);
    req.removeListener("error", onError);
    req.removeListener("aborted", onError);
    if (error === undefined) req.body = chunks === undefined ? (first ?? Buffer.alloc(0)) : Buffer.concat(chunks, received);
    done(error);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (first === undefined) first = chunk;
    else (chunks ??= [first]).push(chunk);
  };
  const onEnd = () => finish(received === length ? undefined : new Error("request size did not match content length"));
  const onError = () => finish(new Error("request aborted"));
  req.on("data", onData);
  req.once("end", onEnd);
  req.once("error", onError);
  req.once("aborted", onError);
}
