export { newTaskId, newRequestId, newDeliveryId, newUserId, newKeyId, newOperatorId, TASK_ID_PATTERN } from "./ids.ts";
export { newApiKey, hashApiKey, API_KEY_PATTERN } from "./api-key.ts";
export { callbackToken, taskOfCallbackToken } from "./callback-token.ts";
