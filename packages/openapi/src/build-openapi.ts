import { ENDPOINT_PATHS, type Catalog } from "@gen/catalog";
import { ENDPOINTS, type Endpoint } from "@gen/domain";
import { Err, type ErrorCode } from "@gen/errors";
import { WEBHOOK_USER_AGENT } from "@gen/webhook-sender";
import { discoveryPaths, discoverySchemas } from "./discovery.ts";
import { documentDescription } from "./document-description.ts";
import { ENDPOINT_NAMES } from "./endpoint-names.ts";
import { errorResponses } from "./error-responses.ts";
import { errorSchemas } from "./error-schemas.ts";
import { HEADERS, LOCATION_HEADER, RATE_LIMIT_HEADERS, REQUEST_ID_HEADER } from "./headers.ts";
import { type Json, nullable, ref } from "./json.ts";
import { OUTPUT_SCHEMAS } from "./output-schemas.ts";
import { requestExamples, requestSchemas } from "./request-schemas.ts";
import { EXAMPLE_TASK_ID, queuedExample, taskExamples, webhookExamples } from "./task-examples.ts";
import { taskSchemas } from "./task-schemas.ts";

export interface OpenApiOptions {
  /** Public base address of the gateway (BASE_URL). */
  baseUrl: string;
  /** Public base of stored media, for examples; default `${baseUrl}/cdn`. */
  cdnUrl?: string;
}

const AUTH: ErrorCode[] = [Err.MissingAuthorization, Err.NotBearer, Err.KeyInvalid, Err.KeyRevoked, Err.OriginNotAllowed];
/** Every API call can be refused by the rate limit and by the gateway's own dependencies. */
const ALWAYS: ErrorCode[] = [Err.RateLimited, Err.Internal, Err.WorkflowUnavailable, Err.DatabaseUnavailable];
const SUBMIT_CODES: ErrorCode[] = [
  ...AUTH,
  Err.BodyNotObject,
  Err.ParameterMissing,
  Err.ParameterInvalid,
  Err.ModelNotSupported,
  Err.SizeNotSupported,
  Err.QualityNotSupported,
  Err.PromptTooLong,
  Err.BodyTooLarge,
  Err.InsufficientCredits,
  Err.PricingUnknown,
  Err.RateLimited,
  Err.PersistFailed,
  Err.WorkflowStartFailed,
  Err.Internal,
  Err.WorkflowUnavailable,
  Err.DatabaseUnavailable,
];
const POLL_CODES: ErrorCode[] = [...AUTH, Err.ParameterInvalid, Err.TaskNotFound, ...ALWAYS];
const CANCEL_CODES: ErrorCode[] = [...AUTH, Err.TaskNotFound, ...ALWAYS];
const ACCOUNT_CODES: ErrorCode[] = [...AUTH, ...ALWAYS];

const SUMMARIES: Readonly<Record<Endpoint, string>> = {
  images: "Generate images",
  videos: "Generate a video",
  audio: "Generate audio",
  detect: "Detect AI-written text",
  humanize: "Humanize text",
  essay: "Write an essay",
  moderations: "Moderate text",
};

const json = (schema: Json, extra: Json = {}): Json => ({ content: { "application/json": { schema, ...extra } } });

/**
 * The OpenAPI 3.1 document of the gateway. Request bodies are the catalog's own JSON Schemas (the
 * ones ajv validates with), error codes come from @gen/errors: the document cannot drift from them.
 */
export function buildOpenApi(catalog: Catalog, options: OpenApiOptions): Record<string, unknown> {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const cdnUrl = (options.cdnUrl ?? `${baseUrl}/cdn`).replace(/\/+$/, "");
  const sample = catalog.models[0];
  const sampleEndpoint: Endpoint = sample?.endpoint ?? ENDPOINTS[0];
  const sampleModel = sample?.id ?? "model-id";

  const schemas: Record<string, Json> = {
    ...requestSchemas(catalog),
    ...taskSchemas(ENDPOINTS.map((endpoint) => `${ENDPOINT_NAMES[endpoint]}Output`)),
    ...errorSchemas(),
    ...discoverySchemas(),
    Account: {
      type: "object",
      additionalProperties: false,
      required: ["credits"],
      properties: { credits: { type: "integer", description: "Current balance." } },
    },
    Health: { type: "object", required: ["status"], properties: { status: { const: "ok" } } },
    Readiness: {
      type: "object",
      required: ["status", "database", "redis"],
      properties: {
        status: { enum: ["ready", "not_ready"] },
        database: { enum: ["ok", "unavailable"] },
        redis: { enum: ["ok", "unavailable"] },
      },
    },
  };
  const paths: Record<string, Json> = {};
  for (const endpoint of ENDPOINTS) {
    const name = ENDPOINT_NAMES[endpoint];
    const ids = catalog.modelsFor(endpoint).map((model) => model.id);
    schemas[`${name}Output`] = { description: `\`output\` of a completed ${endpoint} task.`, ...OUTPUT_SCHEMAS[endpoint] };
    schemas[`${name}Task`] = {
      description: `A task of ${ENDPOINT_PATHS[endpoint]}.`,
      allOf: [ref("Task")],
      properties: { ...(ids.length > 0 ? { model: { enum: ids } } : {}), output: nullable(ref(`${name}Output`)) },
    };
    paths[ENDPOINT_PATHS[endpoint]] = { post: submission(catalog, endpoint, ids[0] ?? "model-id") };
  }

  Object.assign(paths, discoveryPaths());
  paths["/api/v1/tasks/{id}"] = {
    get: {
      operationId: "getTask",
      tags: ["Tasks"],
      summary: "Read a task",
      description: "Always 200 when the task is found, including a failed task (the failure is in `error`). Rate limited per user.",
      parameters: [{ $ref: "#/components/parameters/TaskId" }, { $ref: "#/components/parameters/Include" }],
      responses: {
        "200": {
          description: "The task.",
          headers: { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS },
          ...json(ref("Task"), { examples: taskExamples(sampleEndpoint, sampleModel, cdnUrl) }),
        },
        ...errorResponses(POLL_CODES),
      },
    },
  };
  paths["/api/v1/tasks/{id}/cancel"] = {
    post: {
      operationId: "cancelTask",
      tags: ["Tasks"],
      summary: "Cancel a task",
      description:
        "A queued or running task becomes `failed` with 80008 and is fully refunded (its webhook, if any, is sent). A finished task is returned unchanged.",
      parameters: [{ $ref: "#/components/parameters/TaskId" }],
      responses: {
        "200": { description: "The task after the cancel.", headers: { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS }, ...json(ref("Task")) },
        ...errorResponses(CANCEL_CODES),
      },
    },
  };
  paths["/api/v1/account"] = {
    get: {
      operationId: "getAccount",
      tags: ["Account"],
      summary: "Credit balance of the key's user",
      responses: {
        "200": {
          description: "The balance.",
          headers: { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS },
          ...json(ref("Account"), { example: { credits: 1000 } }),
        },
        ...errorResponses(ACCOUNT_CODES),
      },
    },
  };
  paths["/healthz"] = {
    get: {
      operationId: "healthz",
      tags: ["Operations"],
      summary: "The process answers",
      security: [],
      responses: { "200": { description: "Alive.", headers: REQUEST_ID_HEADER, ...json(ref("Health")) } },
    },
  };
  paths["/readyz"] = {
    get: {
      operationId: "readyz",
      tags: ["Operations"],
      summary: "PostgreSQL and Redis answer",
      security: [],
      responses: {
        "200": { description: "Ready.", headers: REQUEST_ID_HEADER, ...json(ref("Readiness")) },
        "503": { description: "A dependency does not answer.", headers: REQUEST_ID_HEADER, ...json(ref("Readiness")) },
      },
    },
  };
  paths["/api/v1/openapi.json"] = {
    get: {
      operationId: "openApiDocument",
      tags: ["Documentation"],
      summary: "This document",
      security: [],
      responses: { "200": { description: "The OpenAPI 3.1 document.", headers: REQUEST_ID_HEADER, ...json({ type: "object" }) } },
    },
  };
  paths["/docs"] = {
    get: {
      operationId: "docs",
      tags: ["Documentation"],
      summary: "This document, rendered (works offline)",
      security: [],
      responses: { "200": { description: "An HTML page.", headers: REQUEST_ID_HEADER, content: { "text/html": { schema: { type: "string" } } } } },
    },
  };

  return {
    openapi: "3.1.0",
    info: { title: "Generation task gateway", version: "1", description: documentDescription() },
    servers: [{ url: baseUrl }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: "Submissions", description: "Create a task (202); the result arrives by polling or webhook." },
      { name: "Tasks", description: "Read, list or cancel your tasks." },
      { name: "Discovery", description: "The models a key can use." },
      { name: "Account", description: "The key's credit balance." },
      { name: "Operations", description: "Liveness and readiness, for load balancers and orchestrators." },
      { name: "Documentation", description: "This document, as JSON and rendered." },
    ],
    paths,
    webhooks: { taskFinished: { $ref: "#/components/pathItems/TaskWebhook" } },
    components: {
      schemas,
      headers: HEADERS,
      parameters: {
        TaskId: {
          name: "id",
          in: "path",
          required: true,
          schema: { type: "string" },
          example: EXAMPLE_TASK_ID,
          description: "Task id, `task_` + 32 hex characters.",
        },
        Include: {
          name: "include",
          in: "query",
          required: false,
          style: "form",
          explode: false,
          description: "`webhook` adds the webhook object, `billing` the billing block. Comma-separated or repeated; an unknown value gives 20003.",
          schema: { type: "array", items: { type: "string", enum: ["webhook", "billing"] }, uniqueItems: true },
        },
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description:
            "1-255 visible ASCII characters. The same key from the same user within 24 hours returns the original task (202, no second charge); with a different body: 20003.",
          schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
        },
      },
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "sk_ + 40 base62 characters", description: "`Authorization: Bearer <API_KEY>`." },
      },
      pathItems: { TaskWebhook: webhookPathItem(sampleEndpoint, sampleModel, cdnUrl) },
    },
  };
}

function submission(catalog: Catalog, endpoint: Endpoint, model: string): Json {
  const name = ENDPOINT_NAMES[endpoint];
  return {
    operationId: `submit${name}`,
    tags: ["Submissions"],
    summary: SUMMARIES[endpoint],
    description:
      "Validation order: auth, JSON object (20001), required fields (20002), model (20004), values (20003, 20005-20007), `webhook_url` (20003), pricing (30002), credits (30001). Nothing is created or charged when any fails.",
    parameters: [{ $ref: "#/components/parameters/IdempotencyKey" }],
    requestBody: { required: true, ...json(ref(`${name}Request`), { examples: requestExamples(catalog, endpoint) }) },
    responses: {
      "202": {
        description: "Accepted: the task exactly as `GET /api/v1/tasks/{id}` shows it now.",
        headers: { ...REQUEST_ID_HEADER, ...LOCATION_HEADER, ...RATE_LIMIT_HEADERS },
        ...json(ref(`${name}Task`), { examples: { queued: queuedExample(model) } }),
      },
      ...errorResponses(SUBMIT_CODES),
    },
    callbacks: { taskFinished: { "{$request.body#/webhook_url}": { $ref: "#/components/pathItems/TaskWebhook" } } },
  };
}

function webhookPathItem(endpoint: Endpoint, model: string, cdnUrl: string): Json {
  return {
    post: {
      operationId: "taskFinished",
      summary: "Task finished",
      description:
        "Sent to `webhook_url` exactly as given when the task becomes `completed` or `failed`. Not signed and without credentials: verify by polling the task id with your key, " +
        "or embed a secret in the URL. Attempts: at once, about 40 s after a failure, about 5 min after the task finished (3 at most). Deduplicate on the task id.",
      security: [],
      parameters: [
        {
          name: "User-Agent",
          in: "header",
          required: true,
          description: "Carries the delivery format version.",
          schema: { type: "string", const: WEBHOOK_USER_AGENT },
        },
      ],
      requestBody: { required: true, ...json(ref("WebhookPayload"), { examples: webhookExamples(endpoint, model, cdnUrl) }) },
      responses: {
        "2XX": { description: "Delivered. Answer within 10 seconds; the body is never read." },
        default: {
          description: "Any other status (redirects are not followed), or no answer within 10 s: the attempt failed and the next one follows the schedule.",
        },
      },
    },
  };
}
