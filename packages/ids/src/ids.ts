import { randomBytes } from "node:crypto";

// Shapes fixed by docs/api.md#identifiers.
const hex = (bytes: number) => randomBytes(bytes).toString("hex");

export const newTaskId = () => `task_${hex(16)}`;
export const newRequestId = () => `req_${hex(12)}`;
export const newDeliveryId = () => `whd_${hex(12)}`;
export const newUserId = () => `usr_${hex(12)}`;
export const newKeyId = () => `key_${hex(12)}`;
export const newOperatorId = () => `opr_${hex(12)}`;

export const TASK_ID_PATTERN = /^task_[0-9a-f]{32}$/;
