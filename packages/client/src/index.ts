export {
  GenClient,
  type GenClientOptions,
  type GetTaskOptions,
  type RunOptions,
  type SubmissionEndpoint,
  type SubmitOptions,
  type WaitForTaskOptions,
} from "./gen-client.ts";
export { SDK_VERSION } from "./generated/version.ts";
export { GenApiError, GenConnectionError, GenError, GenTimeoutError, isRetryableStatus } from "./gen-errors.ts";
export type { BackoffOptions } from "./retry-timing.ts";
export { createWebhookReceiver, type HandleResult, type WebhookReceiver, type WebhookReceiverOptions } from "./webhook-receiver.ts";
export type * from "./types.ts";
