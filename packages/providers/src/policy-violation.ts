import { Wf, WorkflowError } from "@gen/errors";
import type { UpstreamCause } from "./upstream-cause.ts";

export type PolicyStage = "input" | "output";

/**
 * 80006 with the place the verdict was made, which decides the refund (docs/api.md#content-policy-violations-80006).
 * It stays a WorkflowError so code that only knows about WorkflowError still fails the task right.
 */
export class PolicyViolation extends WorkflowError {
  readonly stage: PolicyStage;
  readonly upstream?: UpstreamCause;

  constructor(stage: PolicyStage, message?: string, upstream?: UpstreamCause) {
    super(Wf.ContentPolicy, message);
    this.name = "PolicyViolation";
    this.stage = stage;
    if (upstream !== undefined) this.upstream = upstream;
  }
}
