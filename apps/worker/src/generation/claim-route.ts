import type { ModelEntry, Route } from "@gen/catalog";
import type { Task } from "@gen/db";
import type { GenerationDeps } from "./generation-deps.ts";
import { claimSlot, leaseGraceMs } from "./route-slots.ts";

/**
 * Taken before a route's submit: whether this task may start a job on `route` now. A route at its
 * `maxConcurrency` (fleet-wide, first come first served after the model's waiting list) answers
 * false, and the task tries the next route. A task holds one slot: taking one on the next route
 * gives back the one it took for a submit that created no job, and so does a step whose every
 * route was unavailable; the job's slot is given back when the task ends (route-slots.ts).
 */
export async function claimRoute(deps: GenerationDeps, task: Task, model: ModelEntry, route: Route): Promise<boolean> {
  return claimSlot(deps, task.id, model, route, leaseGraceMs(deps));
}
