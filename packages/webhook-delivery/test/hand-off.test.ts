import type { Queue } from "bullmq";
import { createLogger } from "@gen/logger";
import type { WebhookJobData } from "@gen/queues";
import { handOffWebhook, type HandOffDeps } from "@gen/webhook-delivery";

// The hand-off of attempt 1 after a terminal commit (no Redis: the queue and the routed hand-off are recorded).
const finishedAt = new Date("2026-11-25T10:00:00.000Z");

function recorder(routed: boolean, fail = false) {
  const calls: string[] = [];
  const webhookQueue = {
    add: async (name: string, data: WebhookJobData, opts: { jobId: string; delay: number }) => {
      calls.push(`add ${name} ${data.taskId} ${data.attempt} ${opts.jobId} delay ${opts.delay}`);
      if (fail) throw new Error("redis gone");
    },
  } as unknown as Queue<WebhookJobData>;
  const deps: HandOffDeps = { webhookQueue, logger: createLogger("hand-off-test", "silent") };
  if (routed) {
    deps.handOffWebhook = async (taskId, url, customer, at) => {
      calls.push(`route ${taskId} ${url} ${customer} ${at.toISOString()}`);
      if (fail) throw new Error("redis gone");
    };
  }
  return { calls, deps };
}

test("a task without a webhook hands nothing off, routed or not", async () => {
  for (const routed of [false, true]) {
    const { calls, deps } = recorder(routed);
    await handOffWebhook(deps, { id: "task_1", userId: "usr_1", webhookUrl: null, finishedAt });
    expect(calls).toEqual([]);
  }
});

test("attempt 1 goes through the routed hand-off when there is one, else one plain add of its own job id", async () => {
  const routed = recorder(true);
  await handOffWebhook(routed.deps, { id: "task_1", userId: "usr_1", webhookUrl: "https://hooks.example/x", finishedAt });
  expect(routed.calls).toEqual([`route task_1 https://hooks.example/x usr_1 ${finishedAt.toISOString()}`]);
  const plain = recorder(false);
  await handOffWebhook(plain.deps, { id: "task_1", userId: "usr_1", webhookUrl: "https://hooks.example/x", finishedAt });
  expect(plain.calls).toEqual(["add deliver task_1 1 task_1-a1 delay 0"]);
});

test("a failed hand-off is logged, not thrown: the task is committed and the reconciler enqueues attempt 1", async () => {
  for (const routed of [false, true]) {
    const { calls, deps } = recorder(routed, true);
    await expect(handOffWebhook(deps, { id: "task_1", userId: "usr_1", webhookUrl: "https://hooks.example/x", finishedAt })).resolves.toBeUndefined();
    expect(calls).toHaveLength(1);
  }
});
