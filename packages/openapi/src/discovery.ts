import { ENDPOINTS, TASK_LIST_LIMIT, TASK_STATUSES } from "@gen/domain";
import { Err, type ErrorCode } from "@gen/errors";
import { errorResponses } from "./error-responses.ts";
import { RATE_LIMIT_HEADERS, REQUEST_ID_HEADER } from "./headers.ts";
import { type Json, nullable, ref } from "./json.ts";

const strings = { type: "array", items: { type: "string" } };

/** `GET /api/v1/models` and `GET /api/v1/tasks` (docs/api.md#discovery): their schemas. */
export function discoverySchemas(): Record<string, Json> {
  return {
    ModelList: {
      type: "object",
      additionalProperties: false,
      required: ["data"],
      properties: { data: { type: "array", items: ref("ModelInfo") } },
    },
    ModelInfo: {
      type: "object",
      description: "A model a submission can use, from the catalog.",
      additionalProperties: false,
      required: ["id", "endpoint", "path", "description", "parameters", "sizes", "default_size", "qualities", "default_quality", "max_prompt_length", "content_filter", "pricing"],
      properties: {
        id: { type: "string", description: "The value of `model` in a submission." },
        endpoint: { type: "string", enum: [...ENDPOINTS] },
        path: { type: "string", description: "Where to submit, e.g. `/api/v1/images/generations`." },
        description: { type: ["string", "null"] },
        parameters: { type: "object", description: "JSON Schema of the request body, `webhook_url` included: what the gateway validates with." },
        sizes: { ...nullable(strings), description: "Accepted `size` values; `null` when the model takes none." },
        default_size: { type: ["string", "null"] },
        qualities: { ...nullable(strings), description: "Accepted `quality` values; `null` when the model takes none." },
        default_quality: { type: ["string", "null"] },
        max_prompt_length: { type: ["integer", "null"], description: "Code points of the prompt (or `text`, or each `input` string); beyond it: 20007." },
        content_filter: { type: "boolean", description: 'Whether the model accepts `"content_filter": false`.' },
        pricing: ref("ModelPricing"),
      },
    },
    ModelPricing: {
      type: "object",
      description:
        "Credits reserved at submission = `credits` × each unit's count (the parameter's value, its length in code points, or the sum over an array; divided by `per`, rounded up) × the multiplier of each listed parameter's value. " +
        "With `method` `tokens` that is the most a task costs: the final charge is computed from the tokens used.",
      additionalProperties: false,
      required: ["method", "credits", "units", "multipliers", "tokens"],
      properties: {
        method: { type: "string", enum: ["flat", "tokens"] },
        credits: { type: "number", description: "Credits for one unit before multipliers." },
        units: {
          type: "array",
          items: {
            type: "object",
            additionalProperties: false,
            required: ["parameter", "per"],
            properties: { parameter: { type: "string" }, per: { type: "integer", minimum: 1 } },
          },
        },
        multipliers: {
          type: "object",
          description: "Per parameter, a factor for each accepted value.",
          additionalProperties: { type: "object", additionalProperties: { type: "number" } },
        },
        tokens: {
          description: "Credits per 1000 tokens, for `method` `tokens`; otherwise `null`.",
          oneOf: [
            {
              type: "object",
              additionalProperties: false,
              required: ["input_per_1k", "output_per_1k"],
              properties: { input_per_1k: { type: "number" }, output_per_1k: { type: "number" } },
            },
            { type: "null" },
          ],
        },
      },
    },
    TaskList: {
      type: "object",
      additionalProperties: false,
      required: ["data", "next_cursor"],
      properties: {
        data: { type: "array", items: ref("Task"), description: "Newest first; each task as `GET /api/v1/tasks/{id}` returns it without `include`." },
        next_cursor: { type: ["string", "null"], description: "Pass as `cursor` for the next page; `null` on the last page." },
      },
    },
  };
}

const AUTH: ErrorCode[] = [Err.MissingAuthorization, Err.NotBearer, Err.KeyInvalid, Err.KeyRevoked, Err.OriginNotAllowed];
const ALWAYS: ErrorCode[] = [Err.RateLimited, Err.Internal, Err.WorkflowUnavailable, Err.DatabaseUnavailable];
const json = (schema: Json): Json => ({ content: { "application/json": { schema } } });
const query = (name: string, description: string, schema: Json): Json => ({ name, in: "query", required: false, description, schema });
const INSTANT: Json = {
  oneOf: [
    { type: "integer", minimum: 0, description: "Unix seconds." },
    { type: "string", format: "date-time" },
  ],
};

export function discoveryPaths(): Record<string, Json> {
  return {
    "/api/v1/models": {
      get: {
        operationId: "listModels",
        tags: ["Discovery"],
        summary: "List the models",
        description: "Every model a submission can use, with its endpoint, request JSON Schema, sizes, qualities and pricing. Rate limited like polls.",
        responses: {
          "200": { description: "The models, in the catalog's order.", headers: { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS }, ...json(ref("ModelList")) },
          ...errorResponses([...AUTH, ...ALWAYS]),
        },
      },
    },
    "/api/v1/tasks": {
      get: {
        operationId: "listTasks",
        tags: ["Tasks"],
        summary: "List your tasks",
        description:
          "The key's user's own tasks, newest first, a page at a time: pass `next_cursor` back as `cursor` until it is `null`. " +
          "Filters combine. An unknown, repeated or invalid parameter (a cursor not returned by this endpoint included) gives 20003 naming it. Rate limited like polls.",
        parameters: [
          query("status", "Only tasks in this status.", { type: "string", enum: [...TASK_STATUSES] }),
          query("model", "Only tasks of this model.", { type: "string", minLength: 1, maxLength: 200 }),
          query("endpoint", "Only tasks of this endpoint.", { type: "string", enum: [...ENDPOINTS] }),
          query("created_after", "Only tasks created at or after this time: Unix seconds or an ISO 8601 date-time.", INSTANT),
          query("created_before", "Only tasks created before this time: Unix seconds or an ISO 8601 date-time.", INSTANT),
          query("limit", `Tasks per page, at most ${TASK_LIST_LIMIT.max}.`, { type: "integer", minimum: 1, maximum: TASK_LIST_LIMIT.max, default: TASK_LIST_LIMIT.default }),
          query("cursor", "`next_cursor` of the previous page, unchanged.", { type: "string" }),
        ],
        responses: {
          "200": { description: "A page of tasks.", headers: { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS }, ...json(ref("TaskList")) },
          ...errorResponses([...AUTH, Err.ParameterInvalid, ...ALWAYS]),
        },
      },
    },
  };
}
