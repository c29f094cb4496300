import http from "node:http";
import type { RedisConfig } from "@gen/config";
import { newApiKey } from "@gen/ids";
import { createRedis } from "@gen/queues";
import { createOperator } from "../../../apps/console/test/support/console-session.ts";
import type { FaultStack } from "../../faults/support/fault-stack.ts";
import type { HookReceiver } from "../../faults/support/hook-receiver.ts";
import { until } from "../../faults/support/load.ts";
import { findRow, findRows } from "../../support/db-rows.ts";

const METRICS_TOKEN_VALUE = "cluster-suite-metrics-token";

/**
 * Bogus-key throttle of the chain's apps: 3 free, then one a minute. Attempts 1 and 2 of a webhook
 * get 30 s from the task's end (the fault suite's 8 s would be used up by a crash's few seconds of
 * failover plus the reconciler's catch-up, and the attempts recorded `stale_claim`).
 */
export const CHAIN_ENV = { BAD_KEY_BURST: "3", BAD_KEY_RATE_PER_MIN: "1", WEBHOOK_FINAL_ATTEMPT_MS: "30000", METRICS_TOKEN: METRICS_TOKEN_VALUE };

/**
 * Submit (an image generation and an analysis, each with a webhook whose first POST is refused),
 * poll to the end, the webhook's retry delivered, the rate limiter's decision kept in Redis, a
 * console sign-in whose session (in Redis) carries the next requests: bull-board's queue list and a
 * manual redelivery; then /readyz and the queue-depth metrics. Returns the tasks' ids.
 */
export async function runWholeChain(stack: FaultStack, receiver: HookReceiver, redis: RedisConfig): Promise<string[]> {
  const { auth } = await stack.user();
  const hook = `${receiver.url}&retry=1`;
  const submissions = [
    await stack.call(auth, "POST", "/api/v1/images/generations", { model: "sim-image-1", prompt: "a fox on a cluster", size: "256x256", webhook_url: hook }),
    await stack.call(auth, "POST", "/api/v1/detect", { model: "sim-detect-1", text: "chain", webhook_url: hook }),
  ];
  expect(submissions.map((s) => s.status)).toEqual([202, 202]);
  const ids = submissions.map((s) => s.body.id as string);

  for (const id of ids) {
    const task = await until(
      async () => {
        const answer = await stack.call(auth, "GET", `/api/v1/tasks/${id}`);
        return answer.body.status === "completed" || answer.body.status === "failed" ? answer.body : null;
      },
      60_000,
      `task ${id} terminal`,
    );
    expect(task.status).toBe("completed");
  }
  const deliveries = await until(
    async () => {
      const rows = await findRows(stack.db, "webhook_deliveries", { taskId: ids });
      return rows.length === 2 && rows.every((row) => row.status === "delivered") ? rows : null;
    },
    60_000,
    "both webhooks delivered",
  );
  expect(deliveries.map((d) => d.attempts)).toEqual([2, 2]);
  expect(ids.map((id) => receiver.posts.get(id)?.map((p) => p.status))).toEqual([
    [503, 200],
    [503, 200],
  ]);

  // Unknown keys: three go to the lookup, then the shared limiter (its bucket in Redis) refuses.
  // From an address of their own, so the block it earns holds up nobody else.
  const bogus: number[] = [];
  for (let i = 0; i < 6; i++) bogus.push(await getFrom(PROBE_ADDRESS, `${stack.baseUrl}/api/v1/account`, `Bearer ${newApiKey()}`));
  expect(bogus.slice(0, 3)).toEqual([401, 401, 401]);
  expect(bogus).toContain(429);
  const client = createRedis(redis, "request");
  try {
    await until(async () => client.status === "ready", 10_000, "test client ready");
    const bucket = `${stack.env.QUEUE_PREFIX}:rl:bad-key:`;
    expect(await client.exists(`${bucket}${PROBE_ADDRESS}`, `${bucket}::ffff:${PROBE_ADDRESS}`)).toBe(1);
  } finally {
    client.disconnect();
  }

  const session = await consoleSignIn(stack);
  const board = await fetch(`${stack.baseUrl}/console/queues/api/queues`, { headers: { Cookie: session.cookie } });
  expect(board.status).toBe(200);
  const queues = ((await board.json()) as { queues: { name: string; counts: Record<string, number> }[] }).queues;
  expect(queues.find((q) => q.name === "generation")?.counts.completed).toBeGreaterThanOrEqual(2);

  const redeliver = await fetch(`${stack.baseUrl}/console/deliveries/${ids[0]}/redeliver`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: session.cookie, "Content-Type": "application/x-www-form-urlencoded", Origin: stack.baseUrl },
    body: new URLSearchParams({ _csrf: session.csrfToken }).toString(),
  });
  expect(redeliver.status).toBe(303);
  await until(
    async () => {
      const row = await findRow(stack.db, "webhook_deliveries", { taskId: ids[0]! });
      return row?.status === "delivered" && row.attempts === 3;
    },
    60_000,
    "manual redelivery delivered",
  );
  expect(receiver.posts.get(ids[0]!)?.map((p) => p.status)).toEqual([503, 200, 200]);

  const ready = await fetch(`${stack.baseUrl}/readyz`);
  expect([ready.status, await ready.json()]).toEqual([200, { status: "ready", database: "ok", redis: "ok" }]);
  const metrics = await fetch(`${stack.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN_VALUE}` } });
  const text = await metrics.text();
  expect(metrics.status).toBe(200);
  expect(text).toMatch(/^gen_queue_jobs\{queue="generation",state="completed"\} [1-9]/m);
  expect(text).not.toMatch(/^gen_queue_jobs_collect_errors_total\{.*\} [1-9]/m);
  return ids;
}

const PROBE_ADDRESS = "127.0.0.2";

/** A GET sent from `localAddress` (a loopback address); its status. */
async function getFrom(localAddress: string, url: string, authorization: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { localAddress, headers: { Authorization: authorization }, timeout: 15_000 }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode ?? 0));
    });
    req.once("timeout", () => req.destroy(new Error("no answer")));
    req.once("error", reject);
  });
}

/** The real sign-in form over HTTP, then a page that needs the session (it carries the CSRF token). */
async function consoleSignIn(stack: FaultStack): Promise<{ cookie: string; csrfToken: string }> {
  const { email, password } = await createOperator(stack.db);
  const form = await fetch(`${stack.baseUrl}/console/sign-in`, { headers: { Accept: "text/html" } });
  // The CSRF cookie and the pre-sign-in session it is bound to.
  const csrfCookie = cookie(form, "gen_console_csrf");
  const preSignIn = cookie(form, "gen_console_pre");
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  expect([csrfCookie !== undefined, preSignIn !== undefined, token !== undefined]).toEqual([true, true, true]);
  const signedIn = await fetch(`${stack.baseUrl}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: `${csrfCookie!}; ${preSignIn!}`, "Content-Type": "application/x-www-form-urlencoded", Origin: stack.baseUrl },
    body: new URLSearchParams({ _csrf: token!, email, password }).toString(),
  });
  expect(signedIn.status).toBe(303);
  const session = cookie(signedIn, "gen_console");
  expect(session).toBeDefined();
  const home = await fetch(`${stack.baseUrl}/console`, { headers: { Accept: "text/html", Cookie: session! }, redirect: "manual" });
  expect(home.status).toBe(200);
  const page = await home.text();
  expect(page).toContain(email);
  return { cookie: session!, csrfToken: /name="_csrf" value="([^"]+)"/.exec(page)![1]! };
}

function cookie(res: Response, name: string): string | undefined {
  return res.headers
    .getSetCookie()
    .find((c) => c.startsWith(`${name}=`))
    ?.split(";")[0];
}
