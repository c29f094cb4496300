import { statSync } from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { newOperatorId } from "@gen/ids";
import { hashPassword } from "@gen/passwords";
import { seedDelivery } from "../../apps/console/test/support/seed-failing.ts";
import { closedPort } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { launchChromium } from "./chromium.ts";
import { keepScreenshot } from "./screenshots.ts";
import { startStack, type Stack } from "./stack.ts";

// From a failed task's API error to its operator-side cause in the console, in Chromium, and the
// console's search, failing-webhook and bulk-redelivery pages, each kept as a screenshot.
// The catalog's HTTP-upstream model points at a loopback port nobody listens on: the submit is
// refused (ECONNREFUSED) and, with no retry budget, the task fails 80001.
let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const operator = { email: "ops-cause@example.test", password: "a long operator password" };

beforeAll(async () => {
  stack = await startStack({ UPSTREAM_URL: `http://127.0.0.1:${await closedPort()}`, UPSTREAM_SUBMIT_RETRY_MS: "0" });
  stack.startWorker();
  await stack.gateway.db.$kysely
    .insertInto("operators")
    .values({ id: newOperatorId(), email: operator.email, password_hash: await hashPassword(operator.password) })
    .execute();
  browser = await launchChromium();
  context = await browser.newContext();
  page = await context.newPage();
  await page.goto(`${stack.baseUrl}/console/sign-in`);
  await page.fill("#email", operator.email);
  await page.fill("#password", operator.password);
  await Promise.all([page.waitForURL(`${stack.baseUrl}/console`), page.click("form#sign-in button[type=submit]")]);
}, 60_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.close();
});

test("a failed task: the API says 80001 and its request id; the console, found by that id, shows the refused connection", async () => {
  const user = await stack.user();
  const submitted = await fetch(`${stack.baseUrl}/api/v1/images/generations`, {
    method: "POST",
    headers: { Authorization: user.auth, "Content-Type": "application/json" },
    body: JSON.stringify({ model: "upstream-image-1", prompt: "a lighthouse", size: "512x512" }),
  });
  expect(submitted.status).toBe(202);
  const requestId = submitted.headers.get("x-request-id")!;
  expect(requestId).toMatch(/^req_[0-9a-f]{24}$/);
  const taskId = ((await submitted.json()) as { id: string }).id;

  const failed = await stack.waitTerminal(user.auth, taskId);
  expect(failed.status).toBe("failed");
  expect(failed.error).toEqual({ code: 80001, message: expect.any(String) });
  // The client learns the code, never what was behind it.
  expect(JSON.stringify(failed)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|submit/);

  // The operator has only the request id the client quoted.
  await page.goto(`${stack.baseUrl}/console/tasks`);
  await page.fill("#task-query", requestId);
  await Promise.all([page.waitForURL(`**/console/deliveries/${taskId}`), page.press("#task-query", "Enter")]);
  await expect(page.textContent("[data-testid=task-request-id]")).resolves.toBe(requestId);
  await expect(page.textContent("#task-status")).resolves.toBe("failed");
  await expect(page.textContent("[data-testid=cause-step]")).resolves.toBe("submit");
  await expect(page.textContent("[data-testid=cause-code]")).resolves.toBe("ECONNREFUSED");
  await expect(page.textContent("#failure-cause")).resolves.toContain("http");
  expect(statSync(await keepScreenshot(page, "console-task-failure-cause")).size).toBeGreaterThan(0);

  // The same task among the user's, from the task page's link.
  await Promise.all([page.waitForURL("**/console/tasks?q=*"), page.click(`a[href="/console/tasks?q=${user.userId}"]`)]);
  await expect(page.locator("#task-results tbody tr").count()).resolves.toBe(1);
  await keepScreenshot(page, "console-task-search");
}, 60_000);

test("failing webhooks: filtered, with the next attempt's time, and a bulk redelivery after a confirmation", async () => {
  const user = await stack.user();
  const host = "bulk-browser.example.test";
  const since = new Date(Date.now() - 3600_000);
  const dead = [];
  for (let i = 0; i < 2; i++)
    dead.push(
      (await seedDelivery(stack.gateway.db, { userId: user.userId, url: `https://${host}/in?t=secret`, status: "failed", lastError: "http_503" })).taskId,
    );
  const due = new Date(Date.now() + 40_000);
  await seedDelivery(stack.gateway.db, { userId: user.userId, url: `https://${host}/in`, status: "pending", lastError: "timeout", nextAttemptAt: due });

  await page.goto(`${stack.baseUrl}/console/deliveries/failing`);
  await page.fill("#f-host", host);
  await page.fill("#f-from", since.toISOString().slice(0, 16));
  await Promise.all([page.waitForURL("**/console/deliveries/failing?*"), page.click("form#failing-filter button[type=submit]")]);
  const states = await page.locator("#failing-deliveries tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-state")));
  expect(states.sort()).toEqual(["dead", "dead", "retrying"]);
  await expect(page.locator(`td.next-attempt time[datetime="${due.toISOString()}"]`).count()).resolves.toBe(1);
  await expect(page.textContent("#failing-deliveries")).resolves.not.toContain("secret");
  await keepScreenshot(page, "console-failing-webhooks");

  await Promise.all([page.waitForURL("**/console/deliveries/failing/redeliver?*"), page.click("a#bulk-redeliver")]);
  await expect(page.getAttribute("#confirm-count", "data-count")).resolves.toBe("2");
  await keepScreenshot(page, "console-bulk-redelivery-confirm");
  await Promise.all([page.waitForURL("**/console/deliveries/failing?*bulk=started"), page.click("button#confirm-redeliver")]);
  for (let i = 0; i < 50 && (await page.getAttribute("#bulk-status", "data-running")) !== "false"; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    await page.reload();
  }
  await expect(page.textContent("#bulk-status")).resolves.toContain("2 of 2 requested");
  await keepScreenshot(page, "console-bulk-redelivery-done");
  const reopened = await stack.gateway.db.$kysely
    .selectFrom("webhook_deliveries")
    .select(["status", "redelivery_requested_by"])
    .where("task_id", "in", dead)
    .execute();
  expect(reopened).toEqual(dead.map(() => ({ status: "in_progress", redelivery_requested_by: operator.email })));
}, 60_000);
