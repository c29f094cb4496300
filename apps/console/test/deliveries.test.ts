import request from "supertest";
import type { Job } from "bullmq";
import { readDelivery, findTask } from "@gen/db";
import type { LastError } from "@gen/domain";
import { newDeliveryId, newTaskId } from "@gen/ids";
import { webhookJobId, type WebhookJobData } from "@gen/queues";
import { taskObject } from "@gen/task-render";
import type { ConsoleDeps } from "../src/console-deps.ts";
import { createScratchDatabase, type ScratchDatabase } from "../../../test/support/scratch-database.ts";
import { signIn, type ConsoleOperatorSession } from "./support/console-session.ts";
import { expectError } from "./support/envelope.ts";
import { createTestConsole, createUser, type TestConsole } from "./support/test-console.ts";
import { findRows, insertRow, insertRows, readRow, updateRows } from "../../../test/support/db-rows.ts";

// The chart counts every attempt in the database: this file gets a database of its own.
let database: ScratchDatabase;
let gw: TestConsole;
let user: { userId: string };
let operator: ConsoleOperatorSession;

const BASE = "/console/deliveries";
const SECRET = "s3cr3t-value";

beforeAll(async () => {
  database = await createScratchDatabase();
  gw = await createTestConsole({ DATABASE_URL: database.url });
  user = await createUser(gw.deps.db);
  operator = await signIn(gw);
}, 60_000);
afterAll(async () => {
  await gw.deps.webhookQueue.obliterate({ force: true }).catch(() => {});
  await gw.close();
  await database.drop();
});

const get = (path: string) => request(gw.app).get(path).set("Accept", "text/html").set("Cookie", operator.cookie);
/** What the browser sends when the operator presses Redeliver: the session cookie and the form's CSRF field. */
const redeliver = (taskId: string, app = gw.app) =>
  request(app).post(`${BASE}/${taskId}/redeliver`).set("Cookie", operator.cookie).type("form").send({ _csrf: operator.csrfToken });

type DeliveryStatus = "pending" | "in_progress" | "delivered" | "failed";

/** A terminal task as the workers leave it, with `outcomes` as its recorded attempts. */
async function seedTask(
  options: {
    delivery?: DeliveryStatus | null;
    outcomes?: Array<{ outcome: LastError | "delivered"; status: number | null; finishedAt?: Date }>;
    failed?: boolean;
  } = {},
) {
  const db = gw.deps.db;
  const id = newTaskId();
  const finishedAt = new Date(Date.now() - 60_000);
  const url = `https://hooks.example.test/receive/gen?token=${SECRET}&tenant=acme`;
  await insertRow(db, "tasks", {
    id,
    userId: user.userId,
    endpoint: "images",
    model: "sim-image-1",
    status: options.failed ? "failed" : "completed",
    input: { prompt: "a lighthouse" },
    output: options.failed ? undefined : { image_urls: [`https://cdn.example.test/tasks/${id}/0.png`] },
    errorCode: options.failed ? 80003 : null,
    errorMessage: options.failed ? "Upstream returned a terminal failure" : null,
    webhookUrl: options.delivery === null ? null : url,
    requestId: "req_000000000000000000000000",
    billingMethod: "flat",
    reservedCredits: 4,
    chargedCredits: options.failed ? 0 : 4,
    refundedCredits: options.failed ? 4 : 0,
    startedAt: new Date(finishedAt.getTime() - 1_000),
    finishedAt,
  });
  if (options.delivery === null) return id;
  const outcomes = options.outcomes ?? [];
  let at = finishedAt.getTime();
  const rows = outcomes.map((attempt, index) => {
    const startedAt = new Date(at);
    const done = attempt.finishedAt ?? new Date(at + 120);
    at = done.getTime() + 1_000;
    return {
      id: newDeliveryId(),
      taskId: id,
      attemptNo: index + 1,
      startedAt,
      finishedAt: done,
      outcome: attempt.outcome,
      responseStatus: attempt.status,
      durationMs: done.getTime() - startedAt.getTime(),
    };
  });
  if (rows.length > 0) await insertRows(db, "webhook_attempts", rows);
  const last = rows.at(-1);
  const delivered = rows.filter((row) => row.outcome === "delivered").at(-1);
  await insertRow(db, "webhook_deliveries", {
    taskId: id,
    url,
    status: options.delivery ?? "pending",
    attempts: rows.length,
    responseStatus: last?.responseStatus ?? null,
    lastError: last && last.outcome !== "delivered" ? last.outcome : null,
    lastAttemptAt: last?.startedAt ?? null,
    deliveredAt: delivered?.finishedAt ?? null,
  });
  return id;
}

const decode = (html: string) =>
  html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
const text = (html: string, pattern: RegExp) => decode(pattern.exec(html)?.[1] ?? "");
const attemptRows = (html: string) => /<table id="attempts">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1]?.match(/<tr\b/g)?.length ?? 0;

describe("GET /console/deliveries/:taskId", () => {
  test("the task, its webhook object exactly as the API renders it, the masked URL, and every attempt", async () => {
    const taskId = await seedTask({
      delivery: "delivered",
      failed: true,
      outcomes: [
        { outcome: "http_503", status: 503 },
        { outcome: "timeout", status: null },
        { outcome: "delivered", status: 204 },
      ],
    });
    const response = await get(`${BASE}/${taskId}`).expect(200);
    const html = response.text;
    expect(response.headers["content-type"]).toMatch(/^text\/html/);

    // The webhook object is the API's, value for value: the API's renderer (@gen/task-render) over
    // the same rows. (The console app has no API; the gateway test console-mount.test.ts compares
    // with GET /api/v1/tasks/{id}?include=webhook itself.)
    const api = { body: taskObject((await findTask(gw.deps.db, taskId))!, { webhook: await readDelivery(gw.deps.db, taskId) }) };
    expect(JSON.parse(text(html, /<pre id="webhook-object">([\s\S]*?)<\/pre>/))).toEqual(JSON.parse(JSON.stringify(api.body.webhook)));
    expect(api.body.webhook).toMatchObject({ status: "delivered", attempts: 3, response_status: 204 });
    expect(text(html, /<td id="webhook-attempts">(\d+)<\/td>/)).toBe("3");
    expect(text(html, /<td id="webhook-status">([^<]*)<\/td>/)).toBe("delivered");

    // Query values never reach the page: callers keep secrets there.
    expect(html).not.toContain(SECRET);
    expect(text(html, /<code id="webhook-url">([^<]*)<\/code>/)).toBe("https://hooks.example.test/rec***/gen?token=***&tenant=***");

    expect(html).toContain(`<code data-testid="task-id">${taskId}</code>`);
    expect(html).toContain(user.userId);
    expect(html).toMatch(/80003 Upstream returned a terminal failure/);
    expect(attemptRows(html)).toBe(3);
    const attempts = await findRows(gw.deps.db, "webhook_attempts", { taskId }, "attemptNo");
    for (const attempt of attempts) {
      const row = new RegExp(`<tr data-testid="attempt-row" data-attempt-no="${attempt.attemptNo}"[^>]*>([\\s\\S]*?)</tr>`).exec(html)?.[1] ?? "";
      expect(row).toContain(attempt.id);
      expect(row).toContain(attempt.startedAt.toISOString());
      expect(row).toContain(`<td data-testid="attempt-outcome">${attempt.outcome}</td>`);
      expect(row).toContain(`<td>${attempt.responseStatus ?? ""}</td><td>${attempt.durationMs}</td>`);
      expect(row).toContain("<td>schedule</td>");
    }
    // Finished: the redeliver form is live and carries the CSRF field.
    expect(html).toContain(
      `<form id="redeliver-form" method="post" action="/console/deliveries/${taskId}/redeliver"><input type="hidden" name="_csrf" value="${operator.csrfToken}"><button id="redeliver" type="submit">`,
    );
  });

  test("which upstream served the task, and the provider's cause of its failure, escaped", async () => {
    const taskId = await seedTask({ delivery: null, failed: true });
    await updateRows(
      gw.deps.db,
      "tasks",
      { id: taskId },
      {
        upstreamProvider: "replicate",
        upstreamModel: "black-forest-labs/flux-schnell",
        upstreamId: "pred_42",
        failureCause: {
          provider: "replicate",
          upstreamModel: "black-forest-labs/flux-schnell",
          status: 500,
          message: "<script>alert(1)</script> CUDA out of memory",
          requestId: "rq-9",
        },
      },
    );
    const html = (await get(`${BASE}/${taskId}`).expect(200)).text;
    expect(text(html, /<span data-testid="upstream-provider">([^<]*)<\/span>/)).toBe("replicate");
    expect(text(html, /<code data-testid="upstream-model">([^<]*)<\/code>/)).toBe("black-forest-labs/flux-schnell");
    expect(text(html, /<code data-testid="upstream-id">([^<]*)<\/code>/)).toBe("pred_42");
    expect(text(html, /<span data-testid="cause-status">([^<]*)<\/span>/)).toBe("500");
    expect(text(html, /<q data-testid="cause-message">([^<]*)<\/q>/)).toBe("<script>alert(1)</script> CUDA out of memory");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; CUDA out of memory");
    expect(text(html, /<code data-testid="cause-request-id">([^<]*)<\/code>/)).toBe("rq-9");
    expect(html).not.toContain("<script>alert(1)");

    const network = await seedTask({ delivery: null, failed: true });
    await updateRows(
      gw.deps.db,
      "tasks",
      { id: network },
      { failureCause: { provider: "fal", upstreamModel: "fal-ai/flux/schnell", message: "connect ECONNREFUSED", code: "ECONNREFUSED" } },
    );
    const page = (await get(`${BASE}/${network}`).expect(200)).text;
    expect(text(page, /<code data-testid="cause-code">([^<]*)<\/code>/)).toBe("ECONNREFUSED");
    expect(page).not.toContain(`id="task-upstream"`);

    const plain = (await get(`${BASE}/${await seedTask({ delivery: null })}`).expect(200)).text;
    expect(plain).not.toContain(`id="failure-cause"`);
  });

  test("a task without webhook_url says so; a pending delivery cannot be redelivered yet", async () => {
    const plain = await seedTask({ delivery: null });
    const html = (await get(`${BASE}/${plain}`).expect(200)).text;
    expect(html).toContain(`<p id="no-webhook">`);
    expect(html).not.toContain(`id="redeliver"`);

    const pending = await seedTask({ delivery: "pending" });
    const page = (await get(`${BASE}/${pending}`).expect(200)).text;
    expect(page).toMatch(/<button id="redeliver" type="submit" disabled/);
    expect(attemptRows(page)).toBe(0);
    expect(page).toContain(`<p id="attempts-empty">`);
  });

  test("unknown and malformed ids get a friendly 404 page, with the id escaped", async () => {
    for (const id of [newTaskId(), "nope", "task_XYZ", "<script>alert(1)</script>", "a".repeat(300)]) {
      const response = await get(`${BASE}/${encodeURIComponent(id)}`).expect(404);
      expect(response.headers["content-type"]).toMatch(/^text\/html/);
      expect(response.text).toContain(`<h1>Task not found</h1>`);
      expect(response.text).toContain(`<form id="find-task"`);
      expect(response.text).not.toContain("<script>");
    }
  });

  test("the search form leads to the task's page", async () => {
    const taskId = await seedTask({ delivery: "pending" });
    const response = await get(`${BASE}?task_id=%20${taskId}%20`).expect(302);
    expect(response.headers.location).toBe(`${BASE}/${taskId}`);
    const index = (await get(BASE).expect(200)).text;
    expect(index).toMatch(/<form id="find-task" method="get" action="\/console\/deliveries" role="search">/);
    expect(index).toContain(`<input id="task-id" name="task_id"`);
  });
});

describe("POST /console/deliveries/:taskId/redeliver", () => {
  test("a delivered webhook: 303 back to the page, the attempt requested in the database and queued once", async () => {
    const taskId = await seedTask({ delivery: "delivered", outcomes: [{ outcome: "delivered", status: 200 }] });
    const response = await redeliver(taskId).expect(303);
    expect(response.headers.location).toBe(`${BASE}/${taskId}?redelivery=requested&attempt=2`);

    const delivery = await readRow(gw.deps.db, "webhook_deliveries", { taskId });
    expect(delivery).toMatchObject({ status: "in_progress", attempts: 1, redeliveryRequestedBy: operator.email });
    expect(delivery.nextAttemptAt).not.toBeNull();
    const job = (await gw.deps.webhookQueue.getJob(webhookJobId(taskId, 2))) as Job<WebhookJobData>;
    expect(job.data).toEqual({ taskId, attempt: 2 });

    const page = (await get(response.headers.location!).expect(200)).text;
    expect(page).toMatch(/<p id="flash" role="status" data-tone="ok" class="card">Redelivery requested: attempt 2 is queued/);
    expect(text(page, /<td id="webhook-status">([^<]*)<\/td>/)).toBe("in_progress");
    expect(page).toMatch(/<button id="redeliver" type="submit" disabled/);

    // A second click while it runs is refused with a message, and queues nothing more.
    const again = await redeliver(taskId).expect(303);
    expect(again.headers.location).toBe(`${BASE}/${taskId}?redelivery=not_finished&status=in_progress`);
    const refused = (await get(again.headers.location!).expect(200)).text;
    expect(refused).toMatch(/<p id="flash" role="status" data-tone="error" class="card error">Not redelivered: the delivery is in_progress\./);
    expect(await gw.deps.webhookQueue.getJobCountByTypes("waiting", "delayed", "active")).toBe(1);
  });

  test("a failed delivery is requested as the attempt after its last", async () => {
    const taskId = await seedTask({
      delivery: "failed",
      outcomes: [
        { outcome: "http_500", status: 500 },
        { outcome: "http_500", status: 500 },
        { outcome: "connect_failed", status: null },
      ],
    });
    const response = await redeliver(taskId).expect(303);
    expect(response.headers.location).toBe(`${BASE}/${taskId}?redelivery=requested&attempt=4`);
    expect(await gw.deps.webhookQueue.getJobState(webhookJobId(taskId, 4))).toBe("waiting");
  });

  test("pending deliveries, tasks without a webhook and unknown tasks are refused with a message, never a 500", async () => {
    const pending = await seedTask({ delivery: "pending" });
    const first = await redeliver(pending).expect(303);
    expect(first.headers.location).toBe(`${BASE}/${pending}?redelivery=not_finished&status=pending`);
    expect((await get(first.headers.location!)).text).toContain("Not redelivered: the delivery is pending.");

    const plain = await seedTask({ delivery: null });
    const second = await redeliver(plain).expect(303);
    expect(second.headers.location).toBe(`${BASE}/${plain}?redelivery=no_webhook`);
    expect((await get(second.headers.location!)).text).toContain("Not redelivered: the task was submitted without a webhook_url.");

    await redeliver(newTaskId()).expect(404);
    await redeliver("nope").expect(404);
    expect((await readDelivery(gw.deps.db, pending))!).toMatchObject({
      status: "pending",
      redeliveryRequestedBy: null,
    });
  });

  test("flash codes are fixed sentences: nothing from the URL is echoed", async () => {
    const taskId = await seedTask({ delivery: "pending" });
    const page = (await get(`${BASE}/${taskId}?redelivery=not_finished&status=${encodeURIComponent("<b>x</b>")}&attempt=1`).expect(200)).text;
    expect(page).toContain("Not redelivered: the delivery is not finished.");
    expect(page).not.toContain("<b>x</b>");
    expect((await get(`${BASE}/${taskId}?redelivery=whatever`).expect(200)).text).not.toContain(`id="flash"`);
  });

  test("Redis refusing the job: the request is committed and the page says the reconciler will start it", async () => {
    const taskId = await seedTask({ delivery: "failed", outcomes: [{ outcome: "http_500", status: 500 }] });
    // A second gateway sharing the first one's Redis prefix (so the session holds) whose queue refuses jobs.
    const broken = await createTestConsole({ DATABASE_URL: database.url, QUEUE_PREFIX: gw.deps.config.queuePrefix }, (deps) => {
      const queue = Object.create(deps.webhookQueue) as ConsoleDeps["webhookQueue"];
      queue.add = () => Promise.reject(new Error("Redis is away"));
      return { webhookQueue: queue };
    });
    const response = await redeliver(taskId, broken.app).expect(303);
    await broken.close();
    expect(response.headers.location).toBe(`${BASE}/${taskId}?redelivery=deferred&attempt=2`);
    expect((await get(response.headers.location!)).text).toMatch(
      /Redelivery recorded as attempt 2, but the queue did not answer; the reconciler in the worker starts it within about \d+ s\./,
    );
    expect(await readRow(gw.deps.db, "webhook_deliveries", { taskId })).toMatchObject({
      status: "in_progress",
      redeliveryRequestedBy: operator.email,
    });
  });
});

describe("deliveries per minute", () => {
  test("the last hour by outcome, as JSON and as a stacked SVG chart", async () => {
    const minute = 60_000;
    const thisMinute = Math.floor(Date.now() / minute) * minute;
    const at = (minutesAgo: number) => new Date(thisMinute - minutesAgo * minute + 5_000);
    await seedTask({
      delivery: "delivered",
      outcomes: [
        { outcome: "http_500", status: 500, finishedAt: at(5) },
        { outcome: "http_404", status: 404, finishedAt: at(5) },
        { outcome: "delivered", status: 200, finishedAt: at(5) },
      ],
    });
    await seedTask({
      delivery: "delivered",
      outcomes: [
        { outcome: "timeout", status: null, finishedAt: at(12) },
        { outcome: "delivered", status: 200, finishedAt: at(12) },
      ],
    });
    await seedTask({
      delivery: "failed",
      outcomes: [
        { outcome: "attempt_lost", status: null, finishedAt: at(12) },
        { outcome: "stale_claim", status: null, finishedAt: at(70) },
      ],
    });

    const stats = (await get(`${BASE}/stats.json`).expect(200).expect("content-type", /json/)).body as {
      from: string;
      to: string;
      minutes: Array<{ minute: string; outcomes: Record<string, number> }>;
      totals: Record<string, number>;
    };
    expect(stats.minutes).toHaveLength(60);
    expect(new Date(stats.to).getTime() - new Date(stats.from).getTime()).toBe(60 * minute);
    const byMinute = new Map(stats.minutes.map((entry) => [entry.minute, entry.outcomes]));
    const key = (minutesAgo: number) => new Date(thisMinute - minutesAgo * minute).toISOString();
    expect(byMinute.get(key(5))).toEqual({ delivered: 1, http_error: 2 });
    expect(byMinute.get(key(12))).toEqual({ delivered: 1, timeout: 1, attempt_lost: 1 });
    // Earlier tests' attempts finished a minute or so ago; the 70-minute-old one is out of the window.
    expect(stats.totals.stale_claim).toBeUndefined();
    expect(stats.totals.http_error).toBeGreaterThanOrEqual(2);

    const html = (await get(BASE).expect(200)).text;
    const svg = /<svg id="deliveries-chart"[\s\S]*?<\/svg>\s*<figcaption/.exec(html)?.[0] ?? "";
    expect(svg).toContain(`role="img"`);
    expect(svg).toMatch(/<title id="chart-title">Webhook attempts per minute by outcome/);
    const bar = (minutesAgo: number, outcome: string) =>
      new RegExp(`<rect [^>]*data-minute="${key(minutesAgo)}" data-outcome="${outcome}" data-count="(\\d+)"><title>([^<]*)</title>`).exec(svg);
    expect(bar(5, "http_error")?.[1]).toBe("2");
    expect(bar(5, "http_error")?.[2]).toBe(`${key(5).slice(11, 16)} UTC: http_error 2 of 3`);
    expect(bar(12, "attempt_lost")?.[1]).toBe("1");
    expect(svg).toMatch(/<g id="chart-legend"><g data-outcome="delivered">/);
    expect(html).toContain(`<table id="stats-table">`);
    // The latest attempts link to their tasks.
    expect(html).toMatch(/<table id="recent-attempts">[\s\S]*<a href="\/console\/deliveries\/task_[0-9a-f]{32}">/);
  });
});

describe("session and CSRF (the console shell's checks cover this router)", () => {
  test("without a session: a browser is sent to sign-in, anything else gets 10005, and nothing is requested", async () => {
    const taskId = await seedTask({ delivery: "delivered", outcomes: [{ outcome: "delivered", status: 200 }] });
    const browser = await request(gw.app).get(`${BASE}/${taskId}`).set("Accept", "text/html").expect(302);
    expect(browser.headers.location).toBe(`/console/sign-in?next=${encodeURIComponent(`${BASE}/${taskId}`)}`);
    expectError(await request(gw.app).get(`${BASE}/stats.json`), 401, 10005);
    expectError(await request(gw.app).post(`${BASE}/${taskId}/redeliver`).type("form").send({ _csrf: operator.csrfToken }), 401, 10005);
    expect(await readRow(gw.deps.db, "webhook_deliveries", { taskId })).toMatchObject({
      status: "delivered",
      redeliveryRequestedBy: null,
    });
  });

  test("a redeliver POST without the session's CSRF token, or from another site, is 403 / 10006 and changes nothing", async () => {
    const taskId = await seedTask({ delivery: "delivered", outcomes: [{ outcome: "delivered", status: 200 }] });
    const post = () => request(gw.app).post(`${BASE}/${taskId}/redeliver`).set("Cookie", operator.cookie).type("form");
    expectError(await post().send({}), 403, 10006);
    expectError(await post().send({ _csrf: "not-the-token" }), 403, 10006);
    expectError(await post().set("Origin", "https://elsewhere.example").send({ _csrf: operator.csrfToken }), 403, 10006);
    expect(await readRow(gw.deps.db, "webhook_deliveries", { taskId })).toMatchObject({
      status: "delivered",
      redeliveryRequestedBy: null,
    });
    expect(await gw.deps.webhookQueue.getJobState(webhookJobId(taskId, 2))).toBe("unknown");
  });
});
