import { randomBytes } from "node:crypto";

// Random bytes fetched 4 KiB at a time, each handed out once: the same CSPRNG as a call per id,
// without a call per request (a request id for every response; the call was 4% of a poll's CPU).
// Only these public identifiers use it; API keys (api-key.ts) draw their own.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

// Shapes fixed by docs/api.md#identifiers.
function hex(bytes: number): string {
  if (used + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  used += bytes;
  return pool.toString("hex", used - bytes, used);
}

export const newTaskId = () => `task_${hex(16)}`;
export const newRequestId = () => `req_${hex(12)}`;
export const newDeliveryId = () => `whd_${hex(12)}`;
export const newUserId = () => `usr_${hex(12)}`;
export const newKeyId = () => `key_${hex(12)}`;
export const newOperatorId = () => `opr_${hex(12)}`;

export const TASK_ID_PATTERN = /^task_[0-9a-f]{32}$/;
