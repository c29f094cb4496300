export const SESSION_COOKIE = "gen_console";
// Double-submit token of the sign-in form, before there is a session to hold one.
export const SIGN_IN_CSRF_COOKIE = "gen_console_csrf";
// The pre-sign-in session that token is bound to (pre-sign-in-session.ts).
export const PRE_SIGN_IN_COOKIE = "gen_console_pre";

/** HttpOnly, SameSite=Strict, scoped to /console: the API never sees these cookies, scripts never read them. */
export const cookieOptions = (secure: boolean) => ({ path: "/console", httpOnly: true, sameSite: "strict" as const, secure });

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
