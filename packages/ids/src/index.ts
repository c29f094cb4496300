export { newTaskId, newRequestId, newDeliveryId, newUserId, newKeyId, newApiKey, TASK_ID_PATTERN } from "./ids.ts";
