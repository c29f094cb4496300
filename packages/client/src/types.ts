// Shapes of the public API (docs/api.md). Field names stay snake_case as on the wire.
import type { TASK_STATUSES, TERMINAL_STATUSES, WEBHOOK_DELIVERY_STATUSES, WEBHOOK_LAST_ERRORS } from "./vocabulary.ts";

export type TaskStatus = (typeof TASK_STATUSES)[number];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export interface TaskError {
  code: number;
  message: string;
  /** Present in a webhook body of a failed task: the delivery attempt's `whd_` id. */
  request_id?: string;
}

export interface ImageOutput {
  image_urls: string[];
}
export interface VideoOutput {
  video_urls: string[];
}
export interface AudioOutput {
  audio_urls: string[];
}
export interface DetectOutput {
  ai_probability: number;
  label: "ai" | "human" | "mixed";
}
export interface HumanizeOutput {
  text: string;
}
export interface EssayOutput {
  text: string;
  word_count: number;
}
export interface ModerationOutput {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
}
export type TaskOutput = ImageOutput | VideoOutput | AudioOutput | DetectOutput | HumanizeOutput | EssayOutput | ModerationOutput;

export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];
export type WebhookLastError = `http_${number}` | (typeof WEBHOOK_LAST_ERRORS)[number];

/** Added by `include: ["webhook"]`; `null` when the task was submitted without `webhook_url`. */
export interface WebhookState {
  status: WebhookDeliveryStatus;
  attempts: number;
  response_status: number | null;
  last_error: WebhookLastError | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
}

/** Added by `include: ["billing"]`; never part of a webhook body. */
export interface Billing {
  method: "flat" | "tokens";
  reserved_credits: number;
  charged_credits: number;
  refunded_credits: number;
  tokens: { input: number; output: number } | null;
}

export interface Task<O = TaskOutput> {
  id: string;
  model: string;
  status: TaskStatus;
  /** Unix time in whole seconds. */
  created_at: number;
  output: O | null;
  usage: { credits: number };
  error: TaskError | null;
  webhook?: WebhookState | null;
  billing?: Billing;
}

/** The webhook body: the task exactly as a default GET returns it, always terminal. */
export type WebhookTask<O = TaskOutput> = Omit<Task<O>, "webhook" | "billing"> & { status: TerminalStatus };

export type TaskInclude = "webhook" | "billing";

export interface Account {
  credits: number;
}

// Request bodies: the common parameters; models may declare more, hence the index signature.
interface SubmissionBase {
  model: string;
  /** https only, a domain name, port 443 if explicit; the task is POSTed there when it finishes. */
  webhook_url?: string;
  [parameter: string]: unknown;
}
export interface ImageRequest extends SubmissionBase {
  prompt: string;
  n?: number;
  size?: string;
  quality?: string;
  content_filter?: boolean;
  image_url?: string;
}
export interface VideoRequest extends SubmissionBase {
  prompt: string;
  duration_seconds?: number;
  size?: string;
  image_url?: string;
}
export interface AudioRequest extends SubmissionBase {
  prompt: string;
  duration_seconds?: number;
  voice?: string;
}
export interface DetectRequest extends SubmissionBase {
  text: string;
}
export interface HumanizeRequest extends SubmissionBase {
  text: string;
}
export interface EssayRequest extends SubmissionBase {
  prompt: string;
  max_words?: number;
}
export interface ModerationRequest extends SubmissionBase {
  input: string | string[];
}
