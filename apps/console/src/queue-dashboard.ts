import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import type { Router } from "express";

/** bull-board over every queue of this deployment (the same Queue objects, so the same QUEUE_PREFIX). */
export function queueDashboard(queues: Queue[], basePath: string): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(basePath);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
    options: { uiConfig: { boardTitle: "Queues", miscLinks: [{ text: "Console", url: "/console" }] } },
  });
  return serverAdapter.getRouter() as Router;
}
