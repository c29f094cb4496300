import type { ModelEntry, Route } from "@gen/catalog";
import type { Task } from "@gen/db";
import type { GenerationDeps } from "./generation-deps.ts";

/**
 * Taken before a route's submit: whether this task may start a job on `route` now. A route at its
 * `maxConcurrency` answers false, and the task tries the next route. Every route is free for now.
 */
export async function claimRoute(_deps: GenerationDeps, _task: Task, _model: ModelEntry, _route: Route): Promise<boolean> {
  return true;
}
