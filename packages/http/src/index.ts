export { context, pathOf, type RequestContext } from "./request-context.ts";
export { errorHandler } from "./error-handler.ts";
export { requestId } from "./request-id.ts";
export { requestLog } from "./request-log.ts";
export { sendError } from "./send-error.ts";
export { drainOnSignal } from "./drain-on-signal.ts";
export { listenHttp } from "./listen-http.ts";
