import type { RequestHandler } from "express";
import type { ConsoleConfig } from "@gen/config";
import { findOperatorById, type Database } from "@gen/db";
import { ApiError, Err } from "@gen/errors";
import type { ConsoleLocals } from "./console-ui.ts";
import { destroySession, passwordStamp } from "./session.ts";
import { wantsHtml } from "./wants-html.ts";

/**
 * Every console route after sign-in. Without a valid session: a browser navigating is sent to the
 * sign-in page (and back afterwards); anything else gets 401 with 10005. The operator row is read on
 * each request, so `pnpm admin disable-operator` and `reset-operator-password` end their sessions at
 * once; a session past its maximum life ends here even if Redis still holds it.
 */
export function requireSession(db: Database, config: ConsoleConfig): RequestHandler {
  return async (req, res, next) => {
    const session = req.session;
    const live = session.operatorId !== undefined && (session.createdAt ?? 0) + config.sessionMaxMs > Date.now();
    const operator = live && session.operatorId !== undefined ? await findOperatorById(db, session.operatorId) : undefined;
    if (
      !live ||
      !operator ||
      operator.disabledAt !== null ||
      session.passwordStamp !== passwordStamp(operator.passwordHash) ||
      typeof session.csrfToken !== "string"
    ) {
      if (session.operatorId !== undefined) await destroySession(req);
      if (req.method === "GET" && wantsHtml(req)) {
        res.redirect(302, `/console/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
        return;
      }
      throw new ApiError(Err.SignInRequired);
    }
    const locals: ConsoleLocals = { operator: { id: operator.id, email: operator.email }, csrfToken: session.csrfToken };
    Object.assign(res.locals, locals);
    next();
  };
}
