export { renderTask, taskObject, type RenderOptions } from "./render-task.ts";
export type { RenderableTask, RenderableDelivery } from "./renderable-task.ts";
