import type { IncomingMessage, ServerResponse } from "node:http";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, type TextMapGetter } from "@opentelemetry/api";
import { inSpanUnder, isTracing } from "./tracer.ts";

type Request = IncomingMessage & { route?: { path?: unknown }; baseUrl?: string; originalUrl?: string };
type Handler<Res> = (req: Request, res: Res, next: (error?: unknown) => void) => void;

const headerGetter: TextMapGetter<IncomingMessage["headers"]> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

/**
 * One SERVER span per HTTP request, the rest of the request's handlers running inside it. A
 * `traceparent` (and `tracestate`) the client sent continues the client's trace; anything else
 * starts a new one. Named by the matched route's pattern (`POST /api/v1/images/generations`), never
 * by the raw path, whose ids would make every name unique; the path goes in without its query
 * string, which may hold secrets. With tracing off there is no middleware at all (an empty list).
 */
export function traceRequests<Res extends ServerResponse>(names: { requestId: (res: Res) => string | undefined }): Handler<Res>[] {
  if (!isTracing()) return [];
  return [
    (req, res, next) => {
      const parent = propagation.extract(ROOT_CONTEXT, req.headers, headerGetter);
      const url = req.originalUrl ?? req.url ?? "/";
      const query = url.indexOf("?");
      inSpanUnder(
        parent,
        `${req.method ?? "GET"}`,
        { "http.request.method": req.method ?? "GET", "url.path": query === -1 ? url : url.slice(0, query) },
        SpanKind.SERVER,
        (span) => {
          res.once("close", () => {
            // As the HTTP metrics label it: a mounted router's (the console's) path before the pattern.
            const route = typeof req.route?.path === "string" ? `${req.baseUrl ?? ""}${req.route.path}` : undefined;
            if (route !== undefined) span.updateName(`${req.method} ${route}`).setAttribute("http.route", route);
            const requestId = names.requestId(res);
            if (requestId !== undefined) span.setAttribute("gen.request_id", requestId);
            span.setAttribute("http.response.status_code", res.statusCode);
            if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
            if (!res.writableFinished) span.setAttribute("gen.response_aborted", true);
            span.end();
          });
          next();
        },
      );
    },
  ];
}
