import { Wf } from "./error-codes.ts";

// Codes the worker writes to a failed task (docs/api.md#workflow-codes). Never an HTTP status.
export const WORKFLOW_CATALOG = {
  [Wf.UpstreamSubmitFailed]: { message: "Upstream submission failed", refund: "full" },
  [Wf.PollingTimeout]: { message: "Polling timeout: the wall-clock cap was reached", refund: "full" },
  [Wf.UpstreamFailed]: { message: "Upstream returned a terminal failure", refund: "full" },
  [Wf.NoOutput]: { message: "Upstream completed but returned no URLs", refund: "full" },
  [Wf.StorageFailed]: { message: "Failed to persist generated files", refund: "full" },
  [Wf.ContentPolicy]: { message: "Content policy violation", refund: "model-policy" },
  [Wf.InputRejected]: { message: "Upstream rejected the input as invalid", refund: "full" },
  [Wf.Canceled]: { message: "Task canceled", refund: "full" },
  [Wf.BillingUnverified]: { message: "Exact token billing evidence could not be verified; refunded", refund: "full" },
} as const satisfies Record<number, { message: string; refund: "full" | "model-policy" }>;

export type WorkflowCode = keyof typeof WORKFLOW_CATALOG;

export function isWorkflowCode(value: unknown): value is WorkflowCode {
  return typeof value === "number" && Object.hasOwn(WORKFLOW_CATALOG, value);
}

/** Thrown inside the worker to end a task as `failed` with a workflow code. */
export class WorkflowError extends Error {
  readonly code: WorkflowCode;
  constructor(code: WorkflowCode, message?: string, options?: ErrorOptions) {
    super(message ?? WORKFLOW_CATALOG[code].message, options);
    this.name = "WorkflowError";
    this.code = code;
  }
}
