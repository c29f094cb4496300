import type { Browser, Page } from "playwright-core";
import { insertOperator } from "@gen/db";
import { newOperatorId } from "@gen/ids";
import { hashPassword } from "@gen/passwords";
import { createWebhookSender } from "@gen/webhook-sender";
import { resolverFor } from "../../packages/webhook-sender/test/helpers/fake-resolver.ts";
import { answerWith, startReceiver, type Receiver } from "../../packages/webhook-sender/test/helpers/receiver.ts";
import { createTestCa, issueServerCert } from "../../packages/webhook-sender/test/helpers/test-pki.ts";
import { launchChromium } from "./chromium.ts";
import { keepScreenshot } from "./screenshots.ts";
import { startStack, type Stack } from "./stack.ts";

// The operations console in a real browser: Playwright drives Debian's Chromium (chromium.ts)
// against the whole stack on loopback.
// A submitted webhook_url may not name a port, so the receiver listens on 127.0.0.2:443 (root only;
// 127.0.0.2 keeps it apart from the webhook-chain test's 127.0.0.1:443).
const HOST = "console-hooks.test.example";
const RECEIVER_IP = "127.0.0.2";
const canRun = process.getuid?.() === 0;
const maybe = canRun ? describe : describe.skip;
if (!canRun) console.warn("console-browser: skipped, binding 127.0.0.2:443 needs root");

let stack: Stack;
let receiver: Receiver;
let browser: Browser;
let status = 500;
const operator = { email: "ops@example.test", password: "a long operator password" };

maybe("operations console in Chromium", () => {
  beforeAll(async () => {
    const ca = await createTestCa("console e2e CA");
    receiver = await startReceiver({
      tls: await issueServerCert([HOST], { ca }),
      host: RECEIVER_IP,
      port: 443,
      handler: (req, res, body) => answerWith(status)(req, res, body),
    });
    // The deployment's sender, as the workers and the console's test webhooks use it: the receiver's
    // name resolves to its loopback address, which the allow list opens, and the test CA is trusted.
    const sender = () => createWebhookSender({ timeoutMs: 1000, allowedCidrs: [`${RECEIVER_IP}/32`], lookup: resolverFor(HOST, [RECEIVER_IP]), ca: ca.cert });
    stack = await startStack(
      {
        WEBHOOK_ALLOWED_CIDRS: `${RECEIVER_IP}/32`,
        WEBHOOK_TIMEOUT_MS: "1000",
        WEBHOOK_RETRY_DELAY_MS: "200",
        WEBHOOK_FINAL_ATTEMPT_MS: "4400",
        RECONCILE_INTERVAL_MS: "100",
      },
      { webhookSender: sender() },
    );
    stack.startWorker();
    stack.startDeliveryWorker(sender());
    await insertOperator(stack.gateway.db, { id: newOperatorId(), email: operator.email, passwordHash: await hashPassword(operator.password) });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await receiver?.close();
  });

  async function attemptRows(page: Page): Promise<{ no: string; outcome: string }[]> {
    return page
      .locator("table#attempts [data-testid=attempt-row]")
      .evaluateAll((rows) => rows.map((r) => ({ no: r.getAttribute("data-attempt-no") ?? "", outcome: r.getAttribute("data-outcome") ?? "" })));
  }

  test("sign in, find a task, see its attempts, redeliver, see the new attempt", async () => {
    const user = await stack.user();
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", {
      model: "sim-image-1",
      prompt: "a lighthouse",
      size: "256x256",
      webhook_url: `https://${HOST}/hooks?token=s3cr3t`,
    });
    expect(submitted.status).toBe(202);
    const taskId = submitted.body.id as string;
    // All three scheduled attempts fail (the receiver answers 500), then it recovers.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { body } = await stack.get(user.auth, `/api/v1/tasks/${taskId}?include=webhook`);
      if (body.webhook?.status === "failed") break;
      if (Date.now() > deadline) throw new Error(`webhook still ${JSON.stringify(body.webhook)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    status = 200;

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/console/deliveries`);
    expect(new URL(page.url()).pathname).toBe("/console/sign-in");
    await page.fill("#email", operator.email);
    await page.fill("#password", operator.password);
    await Promise.all([page.waitForURL(`${stack.baseUrl}/console/deliveries`), page.click("form#sign-in button[type=submit]")]);
    const [session] = await context.cookies();
    expect(session).toMatchObject({ name: "gen_console", httpOnly: true, sameSite: "Strict", secure: true, path: "/console" });
    await expect(page.locator("#deliveries-chart").count()).resolves.toBe(1);

    await page.fill("form#find-task input[name=task_id]", taskId);
    await Promise.all([page.waitForURL(`**/console/deliveries/${taskId}`), page.press("form#find-task input[name=task_id]", "Enter")]);
    await expect(page.textContent("#webhook-status")).resolves.toBe("failed");
    await expect(page.textContent("#webhook-attempts")).resolves.toBe("3");
    expect(await attemptRows(page)).toEqual([1, 2, 3].map((no) => ({ no: String(no), outcome: "http_500" })));
    await expect(page.textContent("#webhook-url")).resolves.not.toContain("s3cr3t");

    await Promise.all([page.waitForURL(`**/console/deliveries/${taskId}?*`), page.click("button#redeliver")]);
    const until = Date.now() + 15_000;
    const finished = async () => ((await attemptRows(page))[3]?.outcome ?? "running") !== "running";
    while (!(await finished()) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await page.goto(`${stack.baseUrl}/console/deliveries/${taskId}`);
    }
    expect((await attemptRows(page))[3]).toEqual({ no: "4", outcome: "delivered" });
    await expect(page.textContent("#webhook-status")).resolves.toBe("delivered");
    await expect(page.textContent("#webhook-attempts")).resolves.toBe("4");
    expect(receiver.requests.filter((r) => r.body.includes(taskId))).toHaveLength(4);
    const api = (await stack.get(user.auth, `/api/v1/tasks/${taskId}?include=webhook`)).body.webhook;
    expect(api).toMatchObject({ status: "delivered", attempts: 4, response_status: 200, last_error: null });

    // A form post that carries the session but not the CSRF token is refused, and sends nothing.
    const forged = await context.request.post(`${stack.baseUrl}/console/deliveries/${taskId}/redeliver`, {
      form: { note: "no token" },
      headers: { Accept: "application/json" },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect((await forged.json()).error.code).toBe(10006);
    await keepScreenshot(page, "console-delivery");
    await context.close();
    expect((await stack.get(user.auth, `/api/v1/tasks/${taskId}?include=webhook`)).body.webhook.attempts).toBe(4);
  }, 60_000);

  test("send a test webhook: one POST reaches the receiver, the page shows its answer", async () => {
    status = 200;
    const before = receiver.requests.length;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/console/sign-in`);
    await page.fill("#email", operator.email);
    await page.fill("#password", operator.password);
    await Promise.all([page.waitForURL(`${stack.baseUrl}/console`), page.click("form#sign-in button[type=submit]")]);
    await page.goto(`${stack.baseUrl}/console/deliveries`);
    await page.fill("#test-webhook-url", `https://${HOST}/hooks/test?token=t3st`);
    await Promise.all([page.waitForURL(`${stack.baseUrl}/console/deliveries/test-webhook`), page.click("button#send-test-webhook")]);
    await expect(page.getAttribute("#test-webhook-result", "data-outcome")).resolves.toBe("delivered");
    await expect(page.textContent("#test-webhook-result")).resolves.toContain("HTTP 200");
    const arrived = receiver.requests.slice(before);
    expect(arrived).toHaveLength(1);
    expect(arrived[0]!.url).toBe("/hooks/test?token=t3st");
    expect(JSON.parse(arrived[0]!.body.toString("utf8"))).toMatchObject({ id: `task_${"0".repeat(32)}`, status: "completed" });

    // The receiver failing is shown as the attempt's last_error would be; a URL no webhook_url may be is refused.
    status = 503;
    await Promise.all([page.waitForURL(`${stack.baseUrl}/console/deliveries/test-webhook`), page.click("button#send-test-webhook")]);
    await expect(page.getAttribute("#test-webhook-result", "data-outcome")).resolves.toBe("http_503");
    await page.fill("#test-webhook-url", "https://127.0.0.2/hooks");
    await Promise.all([page.waitForURL(`${stack.baseUrl}/console/deliveries/test-webhook`), page.click("button#send-test-webhook")]);
    await expect(page.getAttribute("#test-webhook-result", "data-outcome")).resolves.toBe("refused");
    expect(receiver.requests.length - before).toBe(2);
    status = 200;
    await context.close();
  }, 30_000);

  test("without a session the console refuses requests and sends browsers to sign-in", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/console/queues`);
    expect(new URL(page.url()).pathname).toBe("/console/sign-in");
    const api = await context.request.get(`${stack.baseUrl}/console/deliveries/stats.json`, { headers: { Accept: "application/json" } });
    expect(api.status()).toBe(401);
    expect((await api.json()).error.code).toBe(10005);
    await context.close();
  });

  test("the queue dashboard renders both queues for a signed-in operator", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/console/sign-in`);
    await page.fill("#email", operator.email);
    await page.fill("#password", operator.password);
    await Promise.all([page.waitForURL(`${stack.baseUrl}/console`), page.click("form#sign-in button[type=submit]")]);
    // bull-board renders in the page with its own scripts (allowed by the console's CSP for /queues only).
    const errors: string[] = [];
    page.on("console", (message) => void (message.type() === "error" && errors.push(message.text())));
    await page.goto(`${stack.baseUrl}/console/queues`);
    await page.getByText("webhook-delivery").first().waitFor({ timeout: 15_000 });
    await page.getByText("generation").first().waitFor({ timeout: 5_000 });
    await keepScreenshot(page, "console-queues");
    // bull-board asks Google Fonts for its typeface; the CSP keeps operators' browsers off third parties.
    expect(errors.filter((e) => !e.includes("https://fonts.googleapis.com/"))).toEqual([]);
    await context.close();
  });
});
