import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_CATALOG_PATH } from "@gen/catalog";
import { ledgerHolds, startStack, type Stack } from "./stack.ts";
import { readRow } from "../support/db-rows.ts";

// Routes through the gateway, the worker and the upstream simulator: a fallback taking the job
// when the primary does not answer, a quota waited out, and a failure whose provider-side cause
// is kept for the operator and never shown to the client.
let stack: Stack;
let user: { userId: string; auth: string };

beforeAll(async () => {
  const shipped = JSON.parse(readFileSync(DEFAULT_CATALOG_PATH, "utf8")) as { models: Record<string, unknown>[] };
  const upstream = shipped.models.find((m) => m.id === "upstream-image-1")!;
  // Port 1 on loopback refuses connections: the primary is down, the fallback is the simulator (UPSTREAM_URL).
  const fallback = {
    ...upstream,
    id: "fallback-image-1",
    upstreamModel: "upstream-image-1",
    upstreamUrl: "http://127.0.0.1:1",
    fallbacks: [{ provider: "http", upstreamModel: "upstream-image-1" }],
  };
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "gen-routes-")), "models.json");
  writeFileSync(file, JSON.stringify({ models: [...shipped.models, fallback] }));
  stack = await startStack({ MODEL_CATALOG: file, GENERATION_TIMEOUT_MS: "15000", UPSTREAM_SUBMIT_RETRY_MS: "0" });
  stack.startWorker();
  user = await stack.user();
});
afterAll(() => stack.close());
afterEach(() => ledgerHolds(stack, user.userId));

const row = (id: string) => readRow(stack.gateway.db, "tasks", { id });

test("the primary refuses connections: the fallback takes the job, and the task records that route", async () => {
  const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "fallback-image-1", prompt: "a kite" });
  expect(submitted.status).toBe(202);
  const task = await stack.waitTerminal(user.auth, submitted.body.id);
  expect(task.status).toBe("completed");
  expect(await row(submitted.body.id)).toMatchObject({
    upstreamProvider: "http",
    upstreamModel: "upstream-image-1",
    upstreamId: expect.stringMatching(/^upj_/),
  });
});

test("429 with Retry-After at submit is waited out, and the task completes", async () => {
  const started = Date.now();
  const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "upstream-image-1", prompt: "a kite [[up:submit_429=2]]" });
  const task = await stack.waitTerminal(user.auth, submitted.body.id);
  expect(task.status).toBe("completed");
  // Two answers of Retry-After: 1 were honoured.
  expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
});

test("a failed task keeps the provider's cause for the operator; the API shows only the code's own message", async () => {
  const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "upstream-image-1", prompt: "a kite [[up:reject]]" });
  const task = await stack.waitTerminal(user.auth, submitted.body.id);
  expect(task.error).toEqual({ code: 80007, message: "Upstream rejected the input as invalid" });
  const stored = await row(submitted.body.id);
  expect(stored.failureCause).toEqual({
    step: "submit",
    provider: "http",
    upstreamModel: "upstream-image-1",
    status: 400,
    message: "The input was rejected",
    requestId: expect.stringMatching(/^req_/),
  });
  const cause = stored.failureCause as { requestId: string };
  const listed = await stack.get(user.auth, "/api/v1/tasks?limit=50");
  for (const body of [JSON.stringify(task), JSON.stringify(listed.body)]) {
    expect(body).not.toContain("The input was rejected");
    expect(body).not.toContain(cause.requestId);
    expect(body).not.toMatch(/failure_?cause|upstream_?(provider|model|id)/i);
  }
});

test("an outage at submit fails 80001 once the retry budget is spent, with the provider's status and text kept", async () => {
  const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "upstream-image-1", prompt: "a kite [[up:submit_500]]" });
  const task = await stack.waitTerminal(user.auth, submitted.body.id);
  expect(task.error.code).toBe(80001);
  expect((await row(submitted.body.id)).failureCause).toMatchObject({ provider: "http", status: 500, message: "Simulated upstream outage" });
});
