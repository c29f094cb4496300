import { DeliveryStatus, TaskStatus, type Endpoint } from "@gen/domain";
import { WORKFLOW_CATALOG, Wf } from "@gen/errors";
import type { Json } from "./json.ts";
import { OUTPUT_EXAMPLES } from "./output-schemas.ts";

export const EXAMPLE_TASK_ID = "task_0123456789abcdef0123456789abcdef";

const base = (model: string): Json => ({
  id: EXAMPLE_TASK_ID,
  model,
  status: TaskStatus.Queued,
  created_at: 1795000000,
  output: null,
  usage: { credits: 0 },
  error: null,
});

export function queuedExample(model: string): Json {
  return { summary: "Accepted: the task as GET shows it at that moment", value: base(model) };
}

export function taskExamples(endpoint: Endpoint, model: string, cdnUrl: string): Record<string, Json> {
  const failed = { code: Wf.ContentPolicy, message: WORKFLOW_CATALOG[Wf.ContentPolicy].message };
  return {
    completed: {
      summary: "Completed",
      value: { ...base(model), status: TaskStatus.Completed, output: OUTPUT_EXAMPLES[endpoint](cdnUrl), usage: { credits: 4 } },
    },
    failed: { summary: "Failed (polling still answers 200)", value: { ...base(model), status: TaskStatus.Failed, error: failed } },
    included: {
      summary: "With include=webhook,billing",
      value: {
        ...base(model),
        status: TaskStatus.InProgress,
        webhook: { status: DeliveryStatus.Pending, attempts: 0, response_status: null, last_error: null, last_attempt_at: null, delivered_at: null },
        billing: { method: "flat", reserved_credits: 4, charged_credits: null, refunded_credits: null, tokens: null },
      },
    },
  };
}

export function webhookExamples(endpoint: Endpoint, model: string, cdnUrl: string): Record<string, Json> {
  return {
    completed: {
      summary: "Task completed",
      value: { ...base(model), status: TaskStatus.Completed, output: OUTPUT_EXAMPLES[endpoint](cdnUrl), usage: { credits: 4 } },
    },
    failed: {
      summary: "Task failed: error.request_id is the attempt's delivery id",
      value: {
        ...base(model),
        status: TaskStatus.Failed,
        error: { code: Wf.UpstreamFailed, message: WORKFLOW_CATALOG[Wf.UpstreamFailed].message, request_id: "whd_9b1e4c7a2d0f8e3b5a6c1d2e" },
      },
    },
  };
}
