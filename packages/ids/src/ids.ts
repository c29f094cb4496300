import { randomFillSync } from "node:crypto";

// Random bytes drawn from a pool refilled 4 KiB at a time, as crypto.randomUUID does: one
// randomBytes call per id cost more than the rest of the id (a request id is made for every
// response, so polls pay it too). API keys (api-key.ts) draw their own.
// Each byte is handed out once; the pool is as random as the calls it replaces.
const POOL_SIZE = 4096;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let used = POOL_SIZE;

function hex(bytes: number): string {
  if (used + bytes > POOL_SIZE) {
    randomFillSync(pool);
    used = 0;
  }
  const text = pool.toString("hex", used, used + bytes);
  used += bytes;
  return text;
}

// Shapes fixed by docs/api.md#identifiers.
export const newTaskId = () => `task_${hex(16)}`;
export const newRequestId = () => `req_${hex(12)}`;
export const newDeliveryId = () => `whd_${hex(12)}`;
export const newUserId = () => `usr_${hex(12)}`;
export const newKeyId = () => `key_${hex(12)}`;
export const newOperatorId = () => `opr_${hex(12)}`;

export const TASK_ID_PATTERN = /^task_[0-9a-f]{32}$/;
