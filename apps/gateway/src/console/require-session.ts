import type { RequestHandler } from "express";
import type { Database } from "@gen/db";
import { ApiError } from "@gen/errors";
import type { ConsoleLocals } from "./console-ui.ts";
import { SESSION_COOKIE, readCookie } from "./cookies.ts";
import { passwordStamp, type SessionStore } from "./session-store.ts";
import { wantsHtml } from "./wants-html.ts";

/**
 * Every console route after sign-in. Without a valid session: a browser navigating is sent to the
 * sign-in page (and back afterwards); anything else gets 401 with 10005. The operator row is read on
 * each request, so `pnpm admin disable-operator` and `reset-operator-password` end their sessions at once.
 */
export function requireSession(sessions: SessionStore, db: Database): RequestHandler {
  return async (req, res, next) => {
    const token = readCookie(req, SESSION_COOKIE);
    const session = token ? await sessions.get(token) : null;
    const operator = session ? await db.operator.findUnique({ where: { id: session.operatorId }, select: { id: true, email: true, disabledAt: true, passwordHash: true } }) : null;
    if (!session || !operator || operator.disabledAt !== null || session.passwordStamp !== passwordStamp(operator.passwordHash)) {
      if (token && session) await sessions.destroy(token);
      if (req.method === "GET" && wantsHtml(req)) {
        res.redirect(302, `/console/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
        return;
      }
      throw new ApiError(10005);
    }
    const locals: ConsoleLocals = { operator: { id: operator.id, email: operator.email }, csrfToken: session.csrfToken };
    Object.assign(res.locals, locals);
    next();
  };
}
