import { taskObject, type RenderableDelivery, type RenderableTask } from "@gen/task-render";

// The public webhook object's rule, without a database: before the first 2xx it shows the delivery
// as it is; from the first 2xx on it shows that attempt, whatever redeliveries happened since.
const task: RenderableTask = {
  id: "task_0123456789abcdef0123456789abcdef",
  model: "sim-image-1",
  status: "completed",
  createdAt: new Date("2026-11-23T10:00:00.000Z"),
  output: { image_urls: [] },
  errorCode: null,
  errorMessage: null,
  chargedCredits: 1,
  reservedCredits: 1,
  refundedCredits: 0,
  billingMethod: "flat",
  tokensInput: null,
  tokensOutput: null,
};
const t = (s: number) => new Date(Date.UTC(2026, 10, 23, 10, 0, s));
const webhook = (delivery: RenderableDelivery) => taskObject(task, { webhook: delivery }).webhook;
const base: RenderableDelivery = {
  status: "pending",
  attempts: 0,
  responseStatus: null,
  lastError: null,
  lastAttemptAt: null,
  deliveredAt: null,
  deliveredBy: null,
};
const firstOk = { attemptNo: 2, startedAt: t(40), finishedAt: t(41), responseStatus: 204 };
const frozen = {
  status: "delivered",
  attempts: 2,
  response_status: 204,
  last_error: null,
  last_attempt_at: t(40).toISOString(),
  delivered_at: t(41).toISOString(),
};

test.each<[string, RenderableDelivery, Record<string, unknown>]>([
  ["pending", base, { status: "pending", attempts: 0, response_status: null, last_error: null, last_attempt_at: null, delivered_at: null }],
  [
    "between scheduled attempts",
    { ...base, status: "in_progress", attempts: 1, responseStatus: 500, lastError: "http_500", lastAttemptAt: t(1) },
    { status: "in_progress", attempts: 1, response_status: 500, last_error: "http_500", last_attempt_at: t(1).toISOString(), delivered_at: null },
  ],
  [
    "failed, then a manual attempt running",
    { ...base, status: "in_progress", attempts: 4, responseStatus: 500, lastError: "http_500", lastAttemptAt: t(400) },
    { status: "in_progress", attempts: 4, response_status: 500, last_error: "http_500", last_attempt_at: t(400).toISOString(), delivered_at: null },
  ],
  [
    "failed, then a manual attempt failed too",
    { ...base, status: "failed", attempts: 4, responseStatus: null, lastError: "timeout", lastAttemptAt: t(400) },
    { status: "failed", attempts: 4, response_status: null, last_error: "timeout", last_attempt_at: t(400).toISOString(), delivered_at: null },
  ],
  [
    "failed, then delivered by a manual attempt",
    {
      ...base,
      status: "delivered",
      attempts: 4,
      responseStatus: 200,
      lastAttemptAt: t(400),
      deliveredAt: t(401),
      deliveredBy: { attemptNo: 4, startedAt: t(400), finishedAt: t(401), responseStatus: 200 },
    },
    { status: "delivered", attempts: 4, response_status: 200, last_error: null, last_attempt_at: t(400).toISOString(), delivered_at: t(401).toISOString() },
  ],
  ["delivered", { ...base, status: "delivered", attempts: 2, responseStatus: 204, lastAttemptAt: t(40), deliveredAt: t(41), deliveredBy: firstOk }, frozen],
  [
    "delivered, a resend running",
    { ...base, status: "in_progress", attempts: 3, responseStatus: 204, lastAttemptAt: t(90), deliveredAt: t(41), deliveredBy: firstOk },
    frozen,
  ],
  [
    "delivered, a resend failed",
    { ...base, status: "delivered", attempts: 3, responseStatus: 503, lastError: "http_503", lastAttemptAt: t(90), deliveredAt: t(41), deliveredBy: firstOk },
    frozen,
  ],
  [
    "delivered, a resend lost",
    { ...base, status: "delivered", attempts: 3, lastError: "attempt_lost", lastAttemptAt: t(90), deliveredAt: t(41), deliveredBy: firstOk },
    frozen,
  ],
  [
    "delivered, a resend delivered again",
    { ...base, status: "delivered", attempts: 3, responseStatus: 200, lastAttemptAt: t(90), deliveredAt: t(91), deliveredBy: firstOk },
    frozen,
  ],
])("%s", (_name, delivery, expected) => {
  expect(webhook(delivery)).toEqual(expected);
});

test("a webhook object never contradicts itself", () => {
  for (const delivery of [
    base,
    { ...base, status: "delivered", attempts: 3, lastError: "http_503", responseStatus: 503, deliveredAt: t(41), deliveredBy: firstOk },
  ]) {
    const w = webhook(delivery) as Record<string, unknown>;
    if (w.status === "delivered") expect({ last_error: w.last_error, delivered: w.delivered_at !== null }).toEqual({ last_error: null, delivered: true });
    else expect(w.delivered_at).toBeNull();
  }
});
