import type { TaskForBody } from "@gen/db";
import { WorkerError } from "@gen/domain";
import { renderTask } from "@gen/task-render";
import { RENDER_TIMEOUT_MS } from "@gen/domain";
import { workerFailure, type AttemptResult } from "@gen/webhook-delivery";

/**
 * Builds the webhook body of a task for one attempt (`deliveryId` is that attempt's whd_ id) from
 * the task row its claim read.
 */
export type RenderBody = (task: TaskForBody, deliveryId: string) => string | Promise<string>;

/** The production renderer: the default GET body, with `error.request_id` = the attempt id on a failed task. */
export const renderTaskBody: RenderBody = (task, deliveryId) => renderTask(task, { deliveryId });

/** Runs the renderer with the 2 s bound. A failure is that attempt's result; the task is never written. */
export async function renderWithin(
  render: RenderBody,
  task: TaskForBody,
  deliveryId: string,
  timeoutMs = RENDER_TIMEOUT_MS,
): Promise<{ ok: true; body: string } | { ok: false; result: AttemptResult }> {
  let rendering: string | Promise<string>;
  try {
    rendering = render(task, deliveryId);
  } catch (error) {
    return failedRender(error);
  }
  // The production renderer answers at once, from the row the claim read: no timer for it.
  if (typeof rendering === "string") return { ok: true, body: rendering };
  const TIMED_OUT = Symbol("timed out");
  let timer: NodeJS.Timeout | undefined;
  // A renderer that fails after the deadline must not surface as an unhandled rejection.
  rendering.catch(() => undefined);
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), timeoutMs);
  });
  try {
    const body = await Promise.race([rendering, deadline]);
    if (body === TIMED_OUT) return { ok: false, result: workerFailure(WorkerError.RenderTimeout, `no body within ${timeoutMs} ms`) };
    return { ok: true, body };
  } catch (error) {
    return failedRender(error);
  } finally {
    clearTimeout(timer);
  }
}

function failedRender(error: unknown): { ok: false; result: AttemptResult } {
  return { ok: false, result: workerFailure(WorkerError.RenderFailed, error instanceof Error ? error.message : String(error)) };
}
