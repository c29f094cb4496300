import type { RequestHandler } from "express";

// Our pages need nothing from elsewhere and run no inline script; bull-board's page boots with an
// inline script, so its CSP allows that and nothing more (its Google Fonts stylesheet is blocked:
// the system font is fine and operators' browsers call no third party). No page may be framed.
const OURS = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const BULL_BOARD = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'self'";

export const securityHeaders: RequestHandler = (req, res, next) => {
  res.set({
    "Content-Security-Policy": req.path.startsWith("/queues") ? BULL_BOARD : OURS,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
  });
  next();
};
