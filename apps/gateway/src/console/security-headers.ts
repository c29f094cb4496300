import type { RequestHandler } from "express";

// Our pages need nothing from elsewhere and run no script at all. bull-board's page runs only its own
// script files (its config is an inert JSON <script> block, which CSP does not govern) but styles
// elements inline and sets <base>; its Google Fonts stylesheet is blocked: the system font is fine
// and operators' browsers call no third party. No page may be framed.
const OURS = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const BULL_BOARD = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'self'";

export const securityHeaders: RequestHandler = (req, res, next) => {
  res.set({
    "Content-Security-Policy": req.path.startsWith("/queues") ? BULL_BOARD : OURS,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
  });
  next();
};
