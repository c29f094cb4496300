import type { Response } from "express";
import { ENDPOINT_PATHS, type Endpoint } from "@gen/catalog";
import { ApiError, Err } from "@gen/errors";
import { renderTask } from "@gen/task-render";
import { context } from "@gen/http";
import type { HotRoute } from "../http/hot-routes.ts";
import { authenticate } from "../middleware/authenticate.ts";
import { jsonBody } from "../middleware/json-body.ts";
import { rateLimit } from "../middleware/rate-limit.ts";
import type { GatewayDeps } from "../services/gateway-deps.ts";
import { createSubmitter } from "../services/submit-task.ts";

const MAX_IDEMPOTENCY_KEY = 255;

/** The seven POST endpoints: 202 with the task as GET would show it, and Location. */
export function submissionRoutes(deps: GatewayDeps): HotRoute[] {
  const auth = authenticate(deps);
  const limit = rateLimit(deps, "submit", deps.config.submitRate);
  // One per router: concurrent submissions share its batches (one statement, one enqueue).
  const submitTask = createSubmitter(deps);
  return (Object.entries(ENDPOINT_PATHS) as [Endpoint, string][]).map(([endpoint, path]) => ({
    method: "POST",
    path,
    handlers: [
      auth,
      limit,
      jsonBody,
      async (req, res) => {
        const ctx = context(res);
        const { task } = await submitTask({
          userId: ctx.userId!,
          requestId: ctx.requestId,
          endpoint,
          body: req.body as Record<string, unknown>,
          idempotencyKey: idempotencyKey(req.headers["idempotency-key"]),
        });
        ctx.taskId = task.id;
        sendAccepted(res, task.id, renderTask(task));
      },
    ],
  }));
}

/**
 * The 202 as Express's `status().location().type().send()` wrote it (same headers, same order),
 * without their per-call parsing: the body is JSON text and the task id needs no URL encoding.
 * `end(body)` corks the socket and sends head + body (one string) and an empty chunk for its
 * callback through the `writev` path; `write` and an uncork send the string alone with one
 * `write(2)`, so `end` finds nothing left to send. Without a socket
 * (a pipelined response waiting for its turn) or with the socket's buffer full, `end` sends the
 * rest as before.
 */
function sendAccepted(res: Response, taskId: string, body: string): void {
  res.statusCode = 202;
  res.setHeader("Location", `/api/v1/tasks/${taskId}`);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.write(body);
  res.socket?.uncork();
  res.end();
}

function idempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header) || header.length === 0 || header.length > MAX_IDEMPOTENCY_KEY || !/^[\x21-\x7e]+$/.test(header)) {
    throw new ApiError(Err.ParameterInvalid, `Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY} visible ASCII characters`);
  }
  return header;
}
