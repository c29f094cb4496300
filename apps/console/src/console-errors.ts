import type { ErrorRequestHandler, RequestHandler } from "express";
import { ApiError, Err } from "@gen/errors";
import type { ConsoleUi } from "./console-ui.ts";
import { wantsHtml } from "./wants-html.ts";

/** A console path that does not exist: a page for people, 40002 for scripts. */
export function consoleNotFound(ui: ConsoleUi): RequestHandler {
  return (req, res) => {
    if (!wantsHtml(req)) throw new ApiError(Err.RouteNotFound);
    ui.page(res, { title: "Not found", view: "not-found", status: 404 });
  };
}

/**
 * Catalog errors as a page when a person is looking (a refused form post, say); scripts and API
 * clients get the usual JSON envelope from the app's error handler (@gen/http).
 */
export function consoleErrorPage(ui: ConsoleUi): ErrorRequestHandler {
  return (error, req, res, next) => {
    if (!(error instanceof ApiError) || !wantsHtml(req) || res.headersSent) return next(error);
    res.set(error.headers);
    ui.page(res, { title: "Request refused", view: "refused", status: error.status, data: { code: error.code, message: error.message } });
  };
}
