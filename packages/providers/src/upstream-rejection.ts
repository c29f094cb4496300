import { WorkflowError, type WorkflowCode } from "@gen/errors";
import type { UpstreamCause } from "./upstream-cause.ts";

/**
 * The provider answered and refused the job for good (invalid input: 80007; a terminal failure:
 * 80003). A WorkflowError, so it fails the task; `upstream` is what the provider said, for the
 * operator only.
 */
export class UpstreamRejection extends WorkflowError {
  readonly upstream?: UpstreamCause;

  constructor(code: WorkflowCode, upstream?: UpstreamCause) {
    super(code, upstream?.message);
    this.name = "UpstreamRejection";
    if (upstream !== undefined) this.upstream = upstream;
  }
}
