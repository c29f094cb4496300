import type { ModelEntry, Route } from "@gen/catalog";
import type { Task } from "@gen/db";
import type { GenerationDeps } from "./generation-deps.ts";

/**
 * Taken before a route's submit: whether this task may start a job on `route` now. A route at its
 * `maxConcurrency` answers false, and the task tries the next route. A slot taken for a submit
 * that did not create a job (unavailable, refused) is to be given back before the next route is
 * tried, and the job's slot when the task ends. Every route is free for now.
 */
export async function claimRoute(_deps: GenerationDeps, _task: Task, _model: ModelEntry, _route: Route): Promise<boolean> {
  return true;
}
