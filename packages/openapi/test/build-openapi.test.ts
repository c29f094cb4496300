import { Validator } from "@seriousme/openapi-schema-validator";
import { ENDPOINT_PATHS, ENDPOINTS, loadCatalog } from "@gen/catalog";
import { ERROR_CATALOG, WORKFLOW_CATALOG } from "@gen/errors";
import { buildOpenApi } from "@gen/openapi";
import { WEBHOOK_USER_AGENT } from "@gen/webhook-sender";
import { schemaValidator } from "./doc-validator.ts";

const catalog = loadCatalog();
const doc = buildOpenApi(catalog, { baseUrl: "https://api.example.com/" }) as any;
const schemaFor = schemaValidator(doc);
const ENDPOINT_NAMES = ["Images", "Videos", "Audio", "Detect", "Humanize", "Essay", "Moderations"];

const refName = (schema: { $ref?: string }): string => {
  const match = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref ?? "");
  if (!match?.[1]) throw new Error(`not a schema reference: ${JSON.stringify(schema)}`);
  return match[1];
};

test("is a valid OpenAPI 3.1 document whose references all resolve", async () => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc));
  expect(result.errors ?? []).toEqual([]);
  expect(result.valid).toBe(true);
  expect(validator.version).toBe("3.1");
  expect(() => validator.resolveRefs()).not.toThrow();
  expect(doc.servers).toEqual([{ url: "https://api.example.com" }]);
});

test("lists every endpoint, with bearer auth except health and documentation", () => {
  const expected = [
    ...Object.values(ENDPOINT_PATHS).map((path) => `post ${path}`),
    "get /api/v1/tasks/{id}",
    "get /api/v1/tasks",
    "get /api/v1/models",
    "post /api/v1/tasks/{id}/cancel",
    "get /api/v1/account",
    "get /healthz",
    "get /readyz",
    "get /api/v1/openapi.json",
    "get /docs",
  ];
  const actual = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item as object).map((method) => `${method} ${path}`));
  expect(actual.sort()).toEqual(expected.sort());
  expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  expect(doc.security).toEqual([{ bearerAuth: [] }]);
  for (const path of ["/healthz", "/readyz", "/api/v1/openapi.json", "/docs"]) expect(doc.paths[path].get.security).toEqual([]);
  expect(doc.paths["/api/v1/tasks/{id}"].get.parameters).toContainEqual({ $ref: "#/components/parameters/Include" });
  expect(doc.components.parameters.Include.schema.items.enum).toEqual(["webhook", "billing"]);
});

describe("request bodies come from the catalog's own schemas", () => {
  test.each(ENDPOINTS.map((endpoint, i) => [endpoint, ENDPOINT_NAMES[i]!]))("%s", (endpoint, name) => {
    const models = catalog.modelsFor(endpoint);
    const op = doc.paths[ENDPOINT_PATHS[endpoint]].post;
    expect(refName(op.requestBody.content["application/json"].schema)).toBe(`${name}Request`);
    const body = doc.components.schemas[`${name}Request`];
    expect(Object.keys(body.discriminator.mapping)).toEqual(models.map((model) => model.id));
    expect(body.oneOf).toHaveLength(models.length);
    expect(body.discriminator.propertyName).toBe("model");
    for (const [i, model] of models.entries()) {
      const { title, description: _description, ...schema } = doc.components.schemas[refName(body.oneOf[i])];
      expect(title).toBe(model.id);
      expect(schema).toEqual(catalog.requestSchema(model));
      expect(body.discriminator.mapping[model.id]).toBe(body.oneOf[i].$ref);
    }
    expect(schemaFor(`${name}Request`)({ model: "nope", prompt: "x" }).length).toBeGreaterThan(0);
  });

  test("every request example passes the gateway's validation and the document's schema", () => {
    let count = 0;
    for (const [i, endpoint] of ENDPOINTS.entries()) {
      const check = schemaFor(`${ENDPOINT_NAMES[i]}Request`);
      const examples = doc.paths[ENDPOINT_PATHS[endpoint]].post.requestBody.content["application/json"].examples;
      for (const { value } of Object.values(examples) as { value: Record<string, unknown> }[]) {
        const { webhook_url: _hook, ...rest } = value;
        expect(() => catalog.validate(endpoint, rest)).not.toThrow();
        expect(check(value)).toEqual([]);
        count++;
      }
    }
    expect(count).toBe(catalog.models.length);
  });
});

test("every error code, with its status and message, and every workflow code", () => {
  const codes = doc.components.schemas.ErrorCode.oneOf;
  expect(codes.map((entry: any) => [entry.const, entry["x-http-status"]])).toEqual(
    Object.entries(ERROR_CATALOG).map(([code, entry]) => [Number(code), entry.status]),
  );
  for (const entry of codes) expect(entry.description).toContain(ERROR_CATALOG[entry.const as keyof typeof ERROR_CATALOG].message);
  expect(doc.components.schemas.WorkflowCode.oneOf.map((entry: any) => entry.const)).toEqual(Object.keys(WORKFLOW_CATALOG).map(Number));
  for (const code of Object.keys(ERROR_CATALOG)) expect(doc.components.schemas.ErrorCode.description).toContain(`| ${code} | ${ERROR_CATALOG[Number(code) as keyof typeof ERROR_CATALOG].status} |`);
  for (const code of Object.keys(WORKFLOW_CATALOG)) expect(doc.components.schemas.WorkflowCode.description).toContain(`| ${code} |`);
  // /docs shows info.description above the operations: a few lines, the tables live with their schemas.
  expect(doc.info.description.split("\n").length).toBeLessThan(10);
  const statuses = new Set(Object.values(ERROR_CATALOG).map((entry) => entry.status));
  for (const status of statuses) expect(doc.components.schemas[`Error${status}`]).toBeDefined();
  expect(schemaFor("Error404")({ error: { code: 40001, message: "Task not found", request_id: "req_0123456789abcdef01234567" } })).toEqual([]);
  expect(schemaFor("Error404")({ error: { code: 20001, message: "x" } })).not.toEqual([]);
});

test("response headers: X-Request-Id everywhere, Location on 202, RateLimit-* and Retry-After on 429", () => {
  for (const [path, item] of Object.entries(doc.paths) as [string, any][]) {
    for (const op of Object.values(item) as any[]) {
      for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
        expect([path, status, response.headers?.["X-Request-Id"]]).toEqual([path, status, { $ref: "#/components/headers/X-Request-Id" }]);
        if (status === "202")
          expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(["Location", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]));
        if (status === "429") expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(["Retry-After", "RateLimit-Reset"]));
      }
    }
  }
});

test("the webhook: a 3.1 webhooks entry and a callback on every submission, with the User-Agent", () => {
  const item = doc.components.pathItems.TaskWebhook;
  expect(doc.webhooks.taskFinished).toEqual({ $ref: "#/components/pathItems/TaskWebhook" });
  expect(item.post.parameters).toContainEqual(
    expect.objectContaining({ name: "User-Agent", in: "header", schema: { type: "string", const: WEBHOOK_USER_AGENT } }),
  );
  expect(WEBHOOK_USER_AGENT).toBe("service-Webhook/1");
  for (const path of Object.values(ENDPOINT_PATHS)) {
    expect(doc.paths[path].post.callbacks.taskFinished["{$request.body#/webhook_url}"]).toEqual({ $ref: "#/components/pathItems/TaskWebhook" });
  }
  const payload = schemaFor("WebhookPayload");
  const body = {
    id: "task_0123456789abcdef0123456789abcdef",
    model: "m",
    status: "completed",
    created_at: 1,
    output: { image_urls: [] },
    usage: { credits: 1 },
    error: null,
  };
  expect(payload(body)).toEqual([]);
  expect(payload({ ...body, status: "queued" })).not.toEqual([]);
  expect(payload({ ...body, billing: { method: "flat", reserved_credits: 1, charged_credits: 1, refunded_credits: 0, tokens: null } })).not.toEqual([]);
  expect(payload({ ...body, status: "failed", output: null, error: { code: 80003, message: "x" } })).not.toEqual([]);
});

test("the Task schema lists its fields in the fixed order", () => {
  expect(Object.keys(doc.components.schemas.Task.properties)).toEqual([
    "id",
    "model",
    "status",
    "created_at",
    "output",
    "usage",
    "error",
    "webhook",
    "billing",
  ]);
  expect(Object.keys(doc.components.schemas.Billing.properties)).toEqual(["method", "reserved_credits", "charged_credits", "refunded_credits", "tokens"]);
  expect(Object.keys(doc.components.schemas.Webhook.properties)).toEqual([
    "status",
    "attempts",
    "response_status",
    "last_error",
    "last_attempt_at",
    "delivered_at",
  ]);
});

test("every response and webhook example matches its schema", () => {
  let count = 0;
  const media = [
    ...(Object.values(doc.paths) as any[]).flatMap((item) =>
      Object.values(item).flatMap((op: any) => Object.values(op.responses).map((r: any) => r.content?.["application/json"])),
    ),
    doc.components.pathItems.TaskWebhook.post.requestBody.content["application/json"],
  ];
  for (const entry of media) {
    if (!entry?.schema?.$ref) continue;
    const check = schemaFor(refName(entry.schema));
    const values = [...(entry.example === undefined ? [] : [entry.example]), ...Object.values(entry.examples ?? {}).map((e: any) => e.value)];
    for (const value of values) {
      expect(check(value)).toEqual([]);
      count++;
    }
  }
  expect(count).toBeGreaterThan(50);
});
