import { readTaskForBody, type Database } from "@gen/db";
import { WorkerError } from "@gen/domain";
import { renderTask } from "@gen/task-render";
import { RENDER_TIMEOUT_MS, workerFailure, type AttemptResult } from "@gen/webhook-delivery";

/** Builds the webhook body of a task for one attempt (`deliveryId` is that attempt's whd_ id). */
export type RenderBody = (taskId: string, deliveryId: string) => Promise<string>;

/** The production renderer: the default GET body, with `error.request_id` = the attempt id on a failed task. */
export function taskBodyRenderer(db: Database): RenderBody {
  return async (taskId, deliveryId) => {
    const task = await readTaskForBody(db, taskId);
    if (!task) throw new Error(`task ${taskId} not found`);
    return renderTask(task, { deliveryId });
  };
}

/** Runs the renderer with the 2 s bound. A failure is that attempt's result; the task is never written. */
export async function renderWithin(
  render: RenderBody,
  taskId: string,
  deliveryId: string,
  timeoutMs = RENDER_TIMEOUT_MS,
): Promise<{ ok: true; body: string } | { ok: false; result: AttemptResult }> {
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
    if (body === TIMED_OUT) return { ok: false, result: workerFailure(WorkerError.RenderTimeout, `no body within ${timeoutMs} ms`) };
    return { ok: true, body };
  } catch (error) {
    return { ok: false, result: workerFailure(WorkerError.RenderFailed, error instanceof Error ? error.message : String(error)) };
  } finally {
    clearTimeout(timer);
  }
}
