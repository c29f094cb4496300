import type { Request } from "express";

/** A browser navigating (Accept prefers HTML) rather than a script or an API client. */
export function wantsHtml(req: Request): boolean {
  return req.accepts(["json", "html"]) === "html";
}
