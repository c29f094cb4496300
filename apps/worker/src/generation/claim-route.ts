import type { ModelEntry, Route } from "@gen/catalog";
import type { Task } from "@gen/db";
import type { GenerationDeps } from "./generation-deps.ts";
import { claimSlot, leaseGraceMs } from "./route-slots.ts";

/**
 * Taken before a route's submit: whether this task may start a job on `route` now. A route at its
 * `maxConcurrency` (fleet-wide, first come first served after the model's waiting list) answers
 * false, and the task tries the next route. The slot is held until the task's first poll renews it.
 */
export async function claimRoute(deps: GenerationDeps, task: Task, model: ModelEntry, route: Route): Promise<boolean> {
  return claimSlot(deps, task.id, model, route, leaseGraceMs(deps));
}
