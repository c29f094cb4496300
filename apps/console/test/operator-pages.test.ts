import request from "supertest";
import { newRequestId, newUserId } from "@gen/ids";
import { createScratchDatabase, type ScratchDatabase } from "../../../test/support/scratch-database.ts";
import { signIn, type ConsoleOperatorSession } from "./support/console-session.ts";
import { seedDelivery } from "./support/seed-failing.ts";
import { createTestConsole, createUser, type TestConsole } from "./support/test-console.ts";

// The failing list reads every delivery in the database: this file gets a database of its own.
let database: ScratchDatabase;
let gw: TestConsole;
let operator: ConsoleOperatorSession;

beforeAll(async () => {
  database = await createScratchDatabase();
  gw = await createTestConsole({ DATABASE_URL: database.url });
  operator = await signIn(gw);
}, 60_000);
afterAll(async () => {
  await gw.deps.webhookQueue.obliterate({ force: true }).catch(() => {});
  await gw.close();
  await database.drop();
});

const get = (path: string) => request(gw.app).get(path).set("Accept", "text/html").set("Cookie", operator.cookie);
const rowsOf = (html: string) =>
  [...html.matchAll(/<tr data-state="(\w+)"><td><a href="[^"]+"><code>(task_\w+)<\/code>/g)].map((m) => ({ state: m[1], taskId: m[2] }));

describe("finding a task: /console/tasks", () => {
  test("a task id or a request that made one task opens the task page; a request of several, or a user, lists them", async () => {
    const { userId } = await createUser(gw.deps.db);
    const one = await seedDelivery(gw.deps.db, { userId, status: "failed", lastError: "timeout" });
    const shared = newRequestId();
    const a = await seedDelivery(gw.deps.db, { userId, status: "delivered", requestId: shared });
    const b = await seedDelivery(gw.deps.db, { userId, status: "delivered", requestId: shared });

    expect((await get(`/console/tasks?q=${one.taskId}`).expect(302)).headers.location).toBe(`/console/deliveries/${one.taskId}`);
    expect((await get(`/console/tasks?q=%20${one.requestId}%20`).expect(302)).headers.location).toBe(`/console/deliveries/${one.taskId}`);
    const several = await get(`/console/tasks?q=${shared}`).expect(200);
    expect(several.text.match(/<code>task_\w+<\/code>/g)?.sort()).toEqual([`<code>${a.taskId}</code>`, `<code>${b.taskId}</code>`].sort());
    const byUser = await get(`/console/tasks?q=${userId}`).expect(200);
    expect(byUser.text.match(/<a href="\/console\/deliveries\/task_\w+">/g)).toHaveLength(3);

    // The task page names the request and links the user's other tasks.
    const page = await get(`/console/deliveries/${one.taskId}`).expect(200);
    expect(page.text).toContain(`<code data-testid="task-request-id">${one.requestId}</code>`);
    expect(page.text).toContain(`href="/console/tasks?q=${userId}"`);
  });

  test("unknown ids are a 404 page, anything else a 400 page; the text typed is escaped, never markup", async () => {
    expect((await get(`/console/tasks?q=${newRequestId()}`).expect(404)).text).toContain('id="no-tasks"');
    expect((await get(`/console/tasks?q=${newUserId()}`).expect(404)).text).toContain("No task found");
    // What is not a task or request id but has a user id's shape is searched as a user.
    expect((await get("/console/tasks?q=task_XYZ").expect(404)).text).toContain("No task found");
    for (const hostile of ["<script>alert(1)</script>", "usr_1' OR '1'='1", "a".repeat(500), "req_00%00"]) {
      const res = await get(`/console/tasks?q=${encodeURIComponent(hostile)}`).expect(400);
      expect(res.text).not.toContain("<script>alert");
      expect(res.text).toContain("is not a task id");
    }
    // An array of values (q=a&q=b) is not a search.
    expect((await get("/console/tasks?q=a&q=b").expect(200)).text).not.toContain('id="task-results"');
    // Signed out: the sign-in page, not a search.
    expect((await request(gw.app).get("/console/tasks?q=x").set("Accept", "text/html")).status).toBe(302);
  });
});

describe("failing webhooks: /console/deliveries/failing", () => {
  test("dead and retrying deliveries, filtered by state, customer, host, last_error and time; when the next attempt is due", async () => {
    const { userId } = await createUser(gw.deps.db);
    const { userId: other } = await createUser(gw.deps.db);
    const hour = 3600_000;
    const now = Date.now();
    const dead = await seedDelivery(gw.deps.db, {
      userId,
      url: "https://Hooks.Acme.test:8443/in?k=v",
      status: "failed",
      lastError: "http_503",
      lastAttemptAt: new Date(now - 2 * hour),
    });
    const due = new Date(now + 40_000);
    const retrying = await seedDelivery(gw.deps.db, {
      userId,
      url: "https://user:pw@other.test/x",
      status: "pending",
      lastError: "timeout",
      nextAttemptAt: due,
      lastAttemptAt: new Date(now - 60_000),
    });
    const elsewhere = await seedDelivery(gw.deps.db, {
      userId: other,
      url: "https://hooks.acme.test/in",
      status: "failed",
      lastError: "connect_failed",
      lastAttemptAt: new Date(now - 30 * 60_000),
    });
    await seedDelivery(gw.deps.db, { userId, status: "delivered" });
    await seedDelivery(gw.deps.db, { userId, status: "pending" }); // waiting for attempt 1: nothing failed yet

    const list = async (query: string) => rowsOf((await get(`/console/deliveries/failing?${query}`).expect(200)).text);
    const mine = await list(`user=${userId}`);
    expect(mine).toEqual([
      { state: "retrying", taskId: retrying.taskId },
      { state: "dead", taskId: dead.taskId },
    ]);
    const page = (await get(`/console/deliveries/failing?user=${userId}&state=retrying`).expect(200)).text;
    expect(page).toContain(`<td class="next-attempt"><time datetime="${due.toISOString()}">`);
    expect(await list(`user=${userId}&state=dead`)).toEqual([{ state: "dead", taskId: dead.taskId }]);
    // The host without case or port, across customers.
    expect((await list("host=HOOKS.acme.test")).map((row) => row.taskId).sort()).toEqual([dead.taskId, elsewhere.taskId].sort());
    expect(await list("host=other.test")).toEqual([{ state: "retrying", taskId: retrying.taskId }]);
    expect(await list("last_error=connect_failed")).toEqual([{ state: "dead", taskId: elsewhere.taskId }]);
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 16);
    expect(await list(`host=hooks.acme.test&from=${iso(now - hour)}`)).toEqual([{ state: "dead", taskId: elsewhere.taskId }]);
    expect(await list(`host=hooks.acme.test&to=${iso(now - hour)}`)).toEqual([{ state: "dead", taskId: dead.taskId }]);

    // The task page of a retrying delivery says when its next attempt is due.
    expect((await get(`/console/deliveries/${retrying.taskId}`).expect(200)).text).toContain(
      `<td id="webhook-next-attempt"><time datetime="${due.toISOString()}">`,
    );
  });

  test.each([
    ["state=everything", "State must be"],
    ["user=usr_1%27%3B%20drop%20table%20tasks", "Customer must be"],
    ["host=hooks.test%2Fpath", "Host must be"],
    ["host=%3Cscript%3E", "Host must be"],
    ["last_error=http_5000", "last_error must be"],
    ["last_error=nope", "last_error must be"],
    ["from=yesterday", "From must be"],
    ["from=2026-02-30T10:00", "From must be"],
    ["from=2026-01-01T24:00", "From must be"],
    ["to=2026-01-01T10:00%2B25:00", "To must be"],
    ["from=2026-01-02T00:00&to=2026-01-01T00:00", "From must be before To"],
  ])("a filter %s is refused with a message, and nothing is queried", async (query, message) => {
    const res = await get(`/console/deliveries/failing?${query}`).expect(400);
    expect(res.text).toContain(message);
    expect(res.text).not.toContain('id="failing-deliveries"');
    expect(res.text).not.toContain("<script>");
  });
});

describe("bulk redelivery of dead webhooks", () => {
  test("a confirmation naming how many, then a CSRF-checked post that redelivers each one as a manual attempt, at a bounded rate", async () => {
    const { userId } = await createUser(gw.deps.db);
    const since = new Date(Date.now() - 10 * 60_000);
    const host = `bulk-${userId.slice(4, 12)}.test`;
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push((await seedDelivery(gw.deps.db, { userId, url: `https://${host}/in`, status: "failed", lastError: "http_502" })).taskId);
    // Before `since`, and a retrying one: neither is part of the set.
    const older = await seedDelivery(gw.deps.db, {
      userId,
      url: `https://${host}/in`,
      status: "failed",
      lastError: "http_502",
      lastAttemptAt: new Date(since.getTime() - 60_000),
    });
    await seedDelivery(gw.deps.db, {
      userId,
      url: `https://${host}/in`,
      status: "pending",
      lastError: "timeout",
      nextAttemptAt: new Date(Date.now() + 40_000),
    });
    const filter = `host=${host}&from=${since.toISOString().slice(0, 19)}`;

    // No "since": refused before anything.
    expect((await get(`/console/deliveries/failing/redeliver?host=${host}`).expect(400)).text).toContain("Say since when");
    const confirm = await get(`/console/deliveries/failing/redeliver?${filter}`).expect(200);
    expect(confirm.text).toContain('id="confirm-count" data-count="3"');

    const post = (body: Record<string, string>) =>
      request(gw.app).post("/console/deliveries/failing/redeliver").set("Cookie", operator.cookie).type("form").send(body);
    const fields = { host, from: since.toISOString().slice(0, 19) };
    // Without the CSRF token, or without the confirmation: nothing happens.
    expect((await post({ ...fields, confirm: "yes" })).status).toBe(403);
    expect((await post({ ...fields, _csrf: operator.csrfToken })).headers.location).toContain("bulk=refused");
    const started = await post({ ...fields, confirm: "yes", _csrf: operator.csrfToken }).expect(303);
    expect(started.headers.location).toMatch(/^\/console\/deliveries\/failing\?.*bulk=started$/);

    // The run goes on after the answer; the page shows it until it finishes.
    let status = "";
    for (let i = 0; i < 100 && !status.includes('data-running="false"'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = /<p id="bulk-status"[^>]*>[\s\S]*?<\/p>/.exec((await get(`/console/deliveries/failing?${filter}`)).text)?.[0] ?? "";
    }
    expect(status).toContain("3 of 3 requested, 0 skipped");
    const rows = await gw.deps.db.$kysely
      .selectFrom("webhook_deliveries")
      .select(["task_id", "status", "redelivery_requested_by", "next_attempt_at"])
      .where("task_id", "in", [...ids, older.taskId])
      .execute();
    const byId = new Map(rows.map((row) => [row.task_id, row]));
    for (const id of ids) expect(byId.get(id)).toMatchObject({ status: "in_progress", redelivery_requested_by: operator.email });
    expect(byId.get(older.taskId)).toMatchObject({ status: "failed", redelivery_requested_by: null });
    // Each attempt's job is queued under its usual id, like a single redelivery's.
    for (const id of ids) expect(await gw.deps.webhookQueue.getJob(`${id}-a2`)).toBeDefined();
    // Bounded rate: 10 per second, so three take at least two spacings.
    const [startedAt, finishedAt] = [...status.matchAll(/datetime="([^"]+)"/g)].map((m) => Date.parse(m[1]!));
    expect(finishedAt! - startedAt!).toBeGreaterThanOrEqual(195);

    // Again: nothing of the filter is dead any more.
    expect((await post({ ...fields, confirm: "yes", _csrf: operator.csrfToken })).headers.location).toContain("bulk=empty");
  });
});
