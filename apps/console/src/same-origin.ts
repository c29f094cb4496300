import type { Request } from "express";

/**
 * Whether a state-changing request comes from our own pages. Browsers send Origin on every
 * cross-origin request and on same-origin POSTs, and Sec-Fetch-Site where supported; a request
 * naming another site is refused whatever it carries. `requireOrigin` also refuses requests that
 * name no origin at all (bull-board's API, which cannot carry our CSRF token).
 */
export function isSameOrigin(req: Request, baseUrl: string, requireOrigin: boolean): boolean {
  const site = req.get("sec-fetch-site");
  if (site !== undefined && site !== "same-origin" && site !== "none") return false;
  const origin = req.get("origin");
  if (origin === undefined || origin === "null") return !requireOrigin && origin === undefined;
  const ours = new Set([new URL(baseUrl).origin, `${req.protocol}://${req.get("host") ?? ""}`]);
  return ours.has(origin);
}
