export { renderTask, taskObject, type RenderOptions } from "./render-task.ts";
export type { DeliveringAttempt, RenderableTask, RenderableDelivery } from "./renderable-task.ts";
