import type { RequestHandler } from "express";
import { ApiError } from "@gen/errors";

/**
 * The operations console is a session-auth surface: without a session, 10005 for API-style calls
 * and a redirect to the sign-in page for browsers. Sessions arrive with the console itself.
 */
export const consoleGuard: RequestHandler = (req, res, next) => {
  if (req.path === "/sign-in") return next();
  if (req.accepts(["json", "html"]) === "html" && req.method === "GET") {
    res.redirect(302, "/console/sign-in");
    return;
  }
  next(new ApiError(10005));
};
