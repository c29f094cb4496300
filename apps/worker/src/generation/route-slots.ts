import type { ModelEntry, Route } from "@gen/catalog";
import { wakeGenerationJob, type SlotRoute } from "@gen/queues";
import type { GenerationDeps } from "./generation-deps.ts";

/**
 * The worker's side of `maxConcurrency` (slots in @gen/queues' upstream-slots.ts): which routes of a
 * model are capped, the leases its tasks hold, and the waking of waiters when a slot frees.
 */

/** A parked waiter's job runs again after this even if no wake-up reaches it (a lost promote). */
export const SLOT_WAIT_SAFETY_MS = 60_000;

/**
 * What a lease outlives beyond the task's next step being due: that step waiting for a worker in a
 * busy queue, or a dead worker's job being found stalled (JOB_LOCK_MS) and run elsewhere. A lease
 * runs out, and its slot is given back, only when the task's job is gone for good.
 */
export function leaseGraceMs(deps: GenerationDeps): number {
  return Math.max(120_000, 4 * deps.config.jobLockMs);
}

interface CappedRoute extends SlotRoute {
  route: Route;
}

const capped = new WeakMap<ModelEntry, CappedRoute[]>();

/** The model's routes that have a `maxConcurrency`, in order, each under a name stable across catalog edits. */
function cappedRoutes(model: ModelEntry): CappedRoute[] {
  let routes = capped.get(model);
  if (!routes) {
    routes = model.routes.flatMap((route) =>
      route.maxConcurrency === undefined ? [] : [{ route, key: `${route.provider}:${route.upstreamModel}`, cap: route.maxConcurrency }],
    );
    capped.set(model, routes);
  }
  return routes;
}

/** Whether a task of this model can ever have to wait: every route is capped. */
export function mayWait(model: ModelEntry): boolean {
  return model.routes.length > 0 && cappedRoutes(model).length === model.routes.length;
}

const anyMayWait = new WeakMap<readonly ModelEntry[], boolean>();

/** Whether a task of any of these models (a catalog's) can have to wait for a slot before it starts. */
export function someMayWait(models: readonly ModelEntry[]): boolean {
  let answer = anyMayWait.get(models);
  if (answer === undefined) {
    answer = models.some(mayWait);
    anyMayWait.set(models, answer);
  }
  return answer;
}

/**
 * A slot on `route` for the task, for `leaseMs`: true when held (or the route is not capped). Taking
 * it gives back a slot the task held on another route; the waiters that frees are woken.
 */
export async function claimSlot(deps: GenerationDeps, taskId: string, model: ModelEntry, route: Route, leaseMs: number): Promise<boolean> {
  const slots = deps.upstreamSlots;
  const routes = cappedRoutes(model);
  if (!slots || routes.length === 0) return true;
  const index = routes.findIndex((capped) => capped.route === route);
  if (index === -1) {
    // An uncapped route takes the job: whatever the task held or waited for elsewhere is given back.
    await wakeTasks(deps, await slots.release(model.id, routes, taskId));
    return true;
  }
  const claim = await slots.claim(model.id, routes, index, taskId, leaseMs);
  await wakeTasks(deps, claim.wake);
  return claim.granted;
}

/** The first route, in order, with a slot for the task; undefined when every one is full. */
export async function claimAnySlot(deps: GenerationDeps, taskId: string, model: ModelEntry, leaseMs: number): Promise<Route | undefined> {
  for (const route of model.routes) if (await claimSlot(deps, taskId, model, route, leaseMs)) return route;
  return undefined;
}

/**
 * Every route was full: the task joins the model's waiting list. Called once its job is parked (as
 * delayed, until SLOT_WAIT_SAFETY_MS), so a wake-up cannot miss it; the task itself is among those
 * woken when a slot freed since its claims.
 */
export async function waitForSlot(deps: GenerationDeps, taskId: string, model: ModelEntry): Promise<void> {
  const slots = deps.upstreamSlots;
  if (!slots) return;
  await wakeTasks(deps, await slots.wait(model.id, cappedRoutes(model), taskId, SLOT_WAIT_SAFETY_MS + leaseGraceMs(deps)));
}

/** A step of the task's running job: its slot lasts until its next step is due, plus the grace. */
export async function renewSlot(deps: GenerationDeps, taskId: string, model: ModelEntry, route: Route, untilMs: number): Promise<void> {
  const slots = deps.upstreamSlots;
  const routes = cappedRoutes(model);
  const index = routes.findIndex((capped) => capped.route === route);
  if (!slots || index === -1) return;
  await slots.renew(model.id, routes, index, taskId, untilMs + leaseGraceMs(deps));
}

/** The task is terminal: its slot and its place are given back, and the next waiters woken. */
export async function releaseSlot(deps: GenerationDeps, taskId: string, model: ModelEntry | undefined): Promise<void> {
  const slots = deps.upstreamSlots;
  if (!slots || !model || cappedRoutes(model).length === 0) return;
  await wakeTasks(deps, await slots.release(model.id, cappedRoutes(model), taskId));
}

/**
 * Promotes the parked jobs of woken waiters. A wake-up that fails is only late: the waiter's job
 * runs at its safety delay anyway, so this never fails the step that freed the slot.
 */
async function wakeTasks(deps: GenerationDeps, taskIds: string[]): Promise<void> {
  const queue = deps.generationQueue;
  if (!queue || taskIds.length === 0) return;
  await Promise.all(
    taskIds.map((id) =>
      wakeGenerationJob(queue, id).catch((error: unknown) =>
        deps.logger.warn("could not wake a task waiting for an upstream slot", { task_id: id, err: error }),
      ),
    ),
  );
}
