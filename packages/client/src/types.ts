// Shapes of the public API, all taken from the types generated from the service's OpenAPI document
// (generated/openapi.ts, made at build time): a field the service changes changes here too. Field
// names stay snake_case as on the wire.
import type { components, operations } from "./generated/openapi.ts";
import type { TERMINAL_STATUSES, WEBHOOK_LAST_ERRORS } from "./vocabulary.ts";

type Schemas = components["schemas"];

export type TaskStatus = Schemas["Task"]["status"];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export type TaskError = Schemas["TaskError"];

export type ImageOutput = Schemas["ImagesOutput"];
export type VideoOutput = Schemas["VideosOutput"];
export type AudioOutput = Schemas["AudioOutput"];
export type DetectOutput = Schemas["DetectOutput"];
export type HumanizeOutput = Schemas["HumanizeOutput"];
export type EssayOutput = Schemas["EssayOutput"];
export type ModerationOutput = Schemas["ModerationsOutput"];
export type TaskOutput = ImageOutput | VideoOutput | AudioOutput | DetectOutput | HumanizeOutput | EssayOutput | ModerationOutput;

/** `http_<status>` or one of the fixed values (the document can only say "a string" for the first). */
export type WebhookLastError = `http_${number}` | (typeof WEBHOOK_LAST_ERRORS)[number];

/** Added by `include: ["webhook"]`; `null` when the task was submitted without `webhook_url`. */
export type WebhookState = Omit<Schemas["Webhook"], "last_error"> & { last_error: WebhookLastError | null };
export type WebhookDeliveryStatus = WebhookState["status"];

/** Added by `include: ["billing"]`; never part of a webhook body. */
export type Billing = Schemas["Billing"];

/** A task; `O` is its endpoint's output (each submission method says which). */
export type Task<O = TaskOutput> = Omit<Schemas["Task"], "output"> & { output: O | null };

/** The webhook body: the task exactly as a default GET returns it, always terminal. */
export type WebhookTask<O = TaskOutput> = Omit<Task<O>, "webhook" | "billing" | "status"> & { status: TerminalStatus };

export type TaskInclude = "webhook" | "billing";

export type Account = Schemas["Account"];

// Request bodies: per endpoint, one exact body per model of the shipped catalog (its `model` picks it).
export type ImageRequest = Schemas["ImagesRequest"];
export type VideoRequest = Schemas["VideosRequest"];
export type AudioRequest = Schemas["AudioRequest"];
export type DetectRequest = Schemas["DetectRequest"];
export type HumanizeRequest = Schemas["HumanizeRequest"];
export type EssayRequest = Schemas["EssayRequest"];
export type ModerationRequest = Schemas["ModerationsRequest"];

/** `GET /api/v1/models`: one model with its request schema and pricing. */
export type ModelInfo = Schemas["ModelInfo"];
export type ModelPricing = Schemas["ModelPricing"];

/** Filters and paging of `GET /api/v1/tasks`. */
export type TaskListQuery = NonNullable<operations["listTasks"]["parameters"]["query"]>;
/** One page of `GET /api/v1/tasks`: pass `next_cursor` as `cursor` for the next one. */
export type TaskList = Omit<Schemas["TaskList"], "data"> & { data: Task[] };
