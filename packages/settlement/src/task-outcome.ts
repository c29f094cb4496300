import type { WorkflowCode } from "@gen/errors";

/** How a task ends. `charge` is what is kept of the reservation; it is clamped to [0, reserved]. */
export type TaskOutcome =
  | { status: "completed"; output: Record<string, unknown>; charge: number; tokens?: { input: number; output: number } }
  | { status: "failed"; code: WorkflowCode; message?: string; charge: number; tokens?: { input: number; output: number } };
