export { ERROR_CATALOG, isErrorCode, type ErrorCode } from "./error-catalog.ts";
export { ApiError } from "./api-error.ts";
export { WORKFLOW_CATALOG, WorkflowError, isWorkflowCode, type WorkflowCode } from "./workflow-catalog.ts";
export { Err, Wf } from "./error-codes.ts";
