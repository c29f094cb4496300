import type { RequestHandler } from "express";
import helmet from "helmet";

// Our pages need nothing from elsewhere and run no script at all. bull-board's page runs only its own
// script files (its config is an inert JSON <script> block, which CSP does not govern) but styles
// elements inline and sets <base>; its Google Fonts stylesheet is blocked: the system font is fine
// and operators' browsers call no third party. No page may be framed.
const COMMON = { defaultSrc: ["'self'"], imgSrc: ["'self'", "data:"], formAction: ["'self'"], frameAncestors: ["'none'"] };
const OURS = { ...COMMON, styleSrc: ["'self'"], scriptSrc: ["'none'"], baseUri: ["'none'"] };
const BULL_BOARD = { ...COMMON, styleSrc: ["'self'", "'unsafe-inline'"], scriptSrc: ["'self'"], baseUri: ["'self'"] };

const headers = (directives: typeof OURS) =>
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives },
    frameguard: { action: "deny" },
    referrerPolicy: { policy: "same-origin" },
    // HSTS belongs to whoever terminates TLS for the whole host: sent from /console it would bind the
    // API's host (and with includeSubDomains its neighbours) without the operator choosing it.
    strictTransportSecurity: false,
  });

const ours = headers(OURS);
const bullBoard = headers(BULL_BOARD);

/**
 * helmet's headers on every console response (nosniff, no framing, same-origin referrer, cross-origin
 * isolation headers), with the strict policy everywhere but bull-board's pages.
 */
export const securityHeaders: RequestHandler = (req, res, next) => (req.path.startsWith("/queues") ? bullBoard : ours)(req, res, next);
