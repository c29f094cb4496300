import { createHash, randomBytes } from "node:crypto";
import type { Request, Response } from "express";

/** `error.type` values of OpenAI's error objects. */
export const OpenAIErrorType = {
  InvalidRequest: "invalid_request_error",
  Authentication: "authentication_error",
  RateLimit: "requests",
  Server: "server_error",
} as const;

export function openAIId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString("hex")}`;
}

/** OpenAI's error object: `{error: {message, type, param, code}}`. */
export function sendError(res: Response, status: number, type: string, message: string, extra: { code?: string | null; param?: string | null } = {}): void {
  res.status(status).json({ error: { message, type, param: extra.param ?? null, code: extra.code ?? null } });
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** A key for "this same input", stable across retries of one submit. */
export function inputKey(path: string, body: unknown): string {
  return createHash("sha256")
    .update(path)
    .update(JSON.stringify(body) ?? "")
    .digest("hex");
}

/** Where this router is mounted, as seen by the client: the base of the file URLs it hands out. */
export function mountBase(req: Request, publicUrl: string | undefined): string {
  const origin = (publicUrl ?? `${req.protocol}://${req.get("host") ?? "localhost"}`).replace(/\/$/, "");
  return `${origin}${req.baseUrl}`;
}
