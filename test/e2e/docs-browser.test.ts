import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { createTestGateway, type TestGateway } from "../../apps/gateway/test/support/test-gateway.ts";
import { launchChromium } from "./chromium.ts";

// The /docs page under its Content-Security-Policy in a real browser (chromium.ts): Swagger UI
// must still render the reference from its own files with no directive violated, since a policy
// that blocks it fails only in a browser.

let gw: TestGateway;
let server: Server;
let browser: Browser;

beforeAll(async () => {
  gw = await createTestGateway();
  server = gw.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await gw?.close();
});

test("/docs renders the API reference with no Content-Security-Policy violation", async () => {
  const page = await browser.newPage();
  const violations: string[] = [];
  const errors: string[] = [];
  await page.exposeFunction("reportViolation", (text: string) => violations.push(text));
  // Runs in the page (a string: the tests are typed without the DOM's types).
  await page.addInitScript(`document.addEventListener("securitypolicyviolation", (e) => window.reportViolation(e.violatedDirective + " " + e.blockedURI));`);
  page.on("console", (message) => {
    // The browser's own favicon request is no part of the page.
    if (message.type() === "error" && !message.location().url.endsWith("/favicon.ico")) errors.push(`${message.text()} ${message.location().url}`);
  });
  page.on("pageerror", (error) => errors.push(error.message));
  const answer = await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/docs`);
  expect(answer?.headers()["content-security-policy"]).toContain("script-src 'self'");
  await page.waitForSelector(".swagger-ui .info .title", { timeout: 30_000 });
  await page.waitForSelector(".opblock", { timeout: 30_000 });
  expect(await page.locator(".opblock").count()).toBeGreaterThan(3);
  expect(await page.textContent(".swagger-ui .info .title")).toContain("Generation");
  // It opens on the operations: the first one is on the first screen, below a short introduction.
  const first = await page.locator(".opblock").first().boundingBox();
  expect(first!.y).toBeLessThan(page.viewportSize()!.height);
  // An operation opened, with its schemas and examples (the syntax highlighter styles them).
  await page.locator(".opblock-summary").first().click();
  await page.waitForSelector(".opblock-body .responses-wrapper", { timeout: 30_000 });
  await page.locator(".opblock-body .try-out__btn").first().click();
  await page.waitForSelector(".opblock-body .execute", { timeout: 30_000 });
  expect(violations).toEqual([]);
  expect(errors).toEqual([]);
  await page.close();
}, 60_000);
