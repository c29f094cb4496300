import type { Database } from "@gen/db";
import { renderTask, type RenderableTask } from "@gen/task-render";
import { workerFailure, type AttemptResult } from "./attempt-result.ts";

/** docs/api.md#webhook-last-error-values: building the body (reading the task included) gets 2 s. */
export const RENDER_TIMEOUT_MS = 2_000;

/** Builds the webhook body of a task for one attempt (`deliveryId` is that attempt's whd_ id). */
export type RenderBody = (taskId: string, deliveryId: string) => Promise<string>;

/** The production renderer: the default GET body, with `error.request_id` = the attempt id on a failed task. */
export function taskBodyRenderer(db: Database): RenderBody {
  return async (taskId, deliveryId) => {
    // Plain SQL on the pool rather than Prisma: the same row at a fraction of the CPU, on the hottest path.
    const rows = await db.$sql.rows<RenderableTask>`
      SELECT id, model, status, created_at AS "createdAt", output, error_code AS "errorCode", error_message AS "errorMessage",
             charged_credits AS "chargedCredits", reserved_credits AS "reservedCredits", refunded_credits AS "refundedCredits",
             billing_method AS "billingMethod", tokens_input AS "tokensInput", tokens_output AS "tokensOutput"
        FROM tasks WHERE id = ${taskId}`;
    const task = rows[0];
    if (!task) throw new Error(`task ${taskId} not found`);
    return renderTask(task, { deliveryId });
  };
}

/** Runs the renderer with the 2 s bound. A failure is that attempt's result; the task is never written. */
export async function renderWithin(render: RenderBody, taskId: string, deliveryId: string, timeoutMs = RENDER_TIMEOUT_MS): Promise<{ ok: true; body: string } | { ok: false; result: AttemptResult }> {
  const TIMED_OUT = Symbol("timed out");
  let timer: NodeJS.Timeout | undefined;
  const rendering = Promise.resolve().then(() => render(taskId, deliveryId));
  // A renderer that fails after the deadline must not surface as an unhandled rejection.
  rendering.catch(() => undefined);
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), timeoutMs);
  });
  try {
    const body = await Promise.race([rendering, deadline]);
    if (body === TIMED_OUT) return { ok: false, result: workerFailure("render_timeout", `no body within ${timeoutMs} ms`) };
    return { ok: true, body };
  } catch (error) {
    return { ok: false, result: workerFailure("render_failed", error instanceof Error ? error.message : String(error)) };
  } finally {
    clearTimeout(timer);
  }
}
