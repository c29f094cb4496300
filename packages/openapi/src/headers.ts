import type { Json } from "./json.ts";

const header = (description: string, schema: Json): Json => ({ description, schema });

export const HEADERS: Record<string, Json> = {
  "X-Request-Id": header("Id of this request; error envelopes repeat it as `error.request_id`.", { type: "string", pattern: "^req_[0-9a-f]{24}$" }),
  Location: header("Where to poll the task: `/api/v1/tasks/{id}`.", { type: "string", pattern: "^/api/v1/tasks/task_[0-9a-f]{32}$" }),
  "RateLimit-Limit": header("Requests allowed in a burst for this user and kind of request.", { type: "integer", minimum: 0 }),
  "RateLimit-Remaining": header("Requests left now.", { type: "integer", minimum: 0 }),
  "RateLimit-Reset": header("Seconds until the bucket is full again.", { type: "integer", minimum: 0 }),
  "Retry-After": header("Whole seconds to wait before retrying (at least 1).", { type: "integer", minimum: 1 }),
};

const use = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

export const REQUEST_ID_HEADER: Json = { "X-Request-Id": use("X-Request-Id") };

export const RATE_LIMIT_HEADERS: Json = {
  "RateLimit-Limit": use("RateLimit-Limit"),
  "RateLimit-Remaining": use("RateLimit-Remaining"),
  "RateLimit-Reset": use("RateLimit-Reset"),
};

export const LOCATION_HEADER: Json = { Location: use("Location") };

export const RETRY_AFTER_HEADER: Json = { "Retry-After": use("Retry-After") };
