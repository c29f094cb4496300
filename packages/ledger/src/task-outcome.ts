import type { TaskStatus } from "@gen/domain";
import type { WorkflowCode } from "@gen/errors";

/** How a task ends. `charge` is what is kept of the reservation; it is clamped to [0, reserved]. */
export type TaskOutcome =
  | { status: typeof TaskStatus.Completed; output: Record<string, unknown>; charge: number; tokens?: { input: number; output: number } }
  | { status: typeof TaskStatus.Failed; code: WorkflowCode; message?: string; charge: number; tokens?: { input: number; output: number } };
