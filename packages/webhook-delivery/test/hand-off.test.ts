import type { Queue } from "bullmq";
import { createLogger } from "@gen/logger";
import type { WebhookJobData } from "@gen/queues";
import { handOffWebhook, type HandOffDeps } from "@gen/webhook-delivery";

// The hand-off of attempt 1 after a terminal commit (no Redis: the queue's adds are recorded).
function recorder(fail = false) {
  const calls: string[] = [];
  const webhookQueue = {
    add: async (name: string, data: WebhookJobData, opts: { jobId: string; delay: number }) => {
      calls.push(`add ${name} ${data.taskId} ${data.attempt} ${opts.jobId} delay ${opts.delay}`);
      if (fail) throw new Error("redis gone");
    },
  } as unknown as Queue<WebhookJobData>;
  const deps: HandOffDeps = { webhookQueue, logger: createLogger("hand-off-test", "silent") };
  return { calls, deps };
}

test("a task without a webhook hands nothing off", async () => {
  const { calls, deps } = recorder();
  await handOffWebhook(deps, { id: "task_1", webhookUrl: null });
  expect(calls).toEqual([]);
});

test("attempt 1 is one add of its own job id, to run now", async () => {
  const { calls, deps } = recorder();
  await handOffWebhook(deps, { id: "task_1", webhookUrl: "https://hooks.example/x" });
  expect(calls).toEqual(["add deliver task_1 1 task_1-a1 delay 0"]);
});

test("a failed hand-off is logged, not thrown: the task is committed and the reconciler enqueues attempt 1", async () => {
  const { calls, deps } = recorder(true);
  await expect(handOffWebhook(deps, { id: "task_1", webhookUrl: "https://hooks.example/x" })).resolves.toBeUndefined();
  expect(calls).toHaveLength(1);
});
