import type { Request } from "express";

export const SESSION_COOKIE = "gen_console";
// Double-submit token of the sign-in form, before there is a session to hold one.
export const SIGN_IN_CSRF_COOKIE = "gen_console_csrf";

export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface CookieOptions {
  secure: boolean;
  maxAgeSeconds?: number;
}

/** HttpOnly, SameSite=Strict, scoped to /console: the API never sees these cookies, scripts never read them. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, "Path=/console", "HttpOnly", "SameSite=Strict"];
  if (options.secure) parts.push("Secure");
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  return parts.join("; ");
}

/**
 * Secure unless the public address is plain http on a non-loopback host. Browsers treat
 * http://localhost and 127.0.0.1 as secure contexts and keep Secure cookies there, so local runs and
 * tests use the flag too; a plain-http deployment elsewhere could not sign in at all with it.
 */
export function cookiesAreSecure(baseUrl: string): boolean {
  const url = new URL(baseUrl);
  if (url.protocol === "https:") return true;
  return url.hostname === "localhost" || url.hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
}
