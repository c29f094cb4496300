import { execFile } from "node:child_process";
import { disableOperator, findOperatorByEmail } from "@gen/db";
import { promisify } from "node:util";
import request from "supertest";
import { hashPassword } from "@gen/passwords";
import { QUEUE_NAMES } from "@gen/queues";
import { cookieFrom, createOperator, signIn, signInForm, type ConsoleOperatorSession } from "./support/console-session.ts";
import { createTestConsole, type TestConsole } from "./support/test-console.ts";

const run = promisify(execFile);
let gw: TestConsole;
let session: ConsoleOperatorSession;

beforeAll(async () => {
  gw = await createTestConsole({ CONSOLE_SIGN_IN_RATE_PER_MIN: "6000", CONSOLE_SIGN_IN_BURST: "1000" });
  session = await signIn(gw);
});
afterAll(() => gw.close());

const html = (path: string, cookie?: string) => {
  const req = request(gw.app).get(path).set("Accept", "text/html");
  return cookie ? req.set("Cookie", cookie) : req;
};

describe("without a session", () => {
  test.each([
    ["GET", "/console", "application/json"],
    ["GET", "/console/queues/api/queues", "application/json"],
    ["GET", "/console/deliveries/stats.json", "*/*"],
    ["POST", "/console/sign-out", "text/html"],
    ["POST", "/console/deliveries/task_0123456789abcdef0123456789abcdef/redeliver", "application/json"],
    ["PUT", "/console/queues/api/queues/generation/pause", "application/json"],
  ])("%s %s (Accept %s) is 401 with 10005", async (method, path, accept) => {
    const res = await request(gw.app)[method.toLowerCase() as "get"](path).set("Accept", accept);
    expect(res.status).toBe(401);
    if (accept === "text/html") {
      // A browser's form post cannot be redirected usefully: the refusal is a page carrying the code.
      expect(res.text).toContain('data-code="10005"');
      return;
    }
    expect(res.body.error).toMatchObject({ code: 10005 });
    expect(res.body.error.request_id).toMatch(/^req_/);
  });

  test("a browser is sent to the sign-in page and back", async () => {
    const res = await html("/console/deliveries?task_id=x");
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe("/console/sign-in?next=%2Fconsole%2Fdeliveries%3Ftask_id%3Dx");
  });

  test("a forged or unknown session cookie counts as none", async () => {
    for (const cookie of ["gen_console=forged", `gen_console=${"A".repeat(43)}`, "gen_console="]) {
      expect((await html("/console", cookie)).status).toBe(302);
      expect((await request(gw.app).get("/console").set("Cookie", cookie)).body.error.code).toBe(10005);
    }
  });
});

describe("sign-in", () => {
  test("the form sets an HttpOnly, SameSite=Strict, Secure CSRF cookie scoped to /console", async () => {
    const res = await html("/console/sign-in");
    expect(res.status).toBe(200);
    const line = (res.headers["set-cookie"] as unknown as string[]).find((c) => c.startsWith("gen_console_csrf="))!;
    // Attribute order is the cookie library's (express's res.cookie); the attributes are the point.
    expect(line.split("; ").slice(1).sort()).toEqual(["HttpOnly", "Path=/console", "SameSite=Strict", "Secure"]);
    expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(res.text).toContain('id="sign-in"');
  });

  const attempt = async (fields: Record<string, string>, opts: { omitToken?: boolean; origin?: string; on?: TestConsole } = {}) => {
    const app = (opts.on ?? gw).app;
    const { cookie, token } = signInForm(await request(app).get("/console/sign-in").set("Accept", "text/html"));
    const req = request(app).post("/console/sign-in").set("Cookie", cookie).set("Accept", "text/html").type("form");
    if (opts.origin) req.set("Origin", opts.origin);
    return req.send(opts.omitToken ? fields : { _csrf: token, ...fields });
  };

  test("a wrong password and an unknown e-mail get the same answer and no session", async () => {
    const op = await createOperator(gw.deps.db);
    for (const fields of [
      { email: op.email, password: "wrong password!" },
      { email: "nobody@example.test", password: op.password },
    ]) {
      const res = await attempt(fields);
      expect(res.status).toBe(401);
      expect(res.text).toContain("Wrong e-mail or password.");
      expect(cookieFrom(res, "gen_console")).toBeUndefined();
    }
  });

  test("the right password gives a session cookie and goes to a console path only", async () => {
    const op = await createOperator(gw.deps.db);
    const ok = await attempt({ email: op.email.toUpperCase(), password: op.password, next: "/console/deliveries" });
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe("/console/deliveries");
    const line = (ok.headers["set-cookie"] as unknown as string[]).find((c) => c.startsWith("gen_console="))!;
    // express-session's signed value: "s:" + a 43-character random id + "." + its HMAC; no Max-Age, so it ends with the browser.
    const [pair, ...attributes] = line.split("; ");
    expect(decodeURIComponent(pair!)).toMatch(/^gen_console=s:[\w-]{43}\.[\w+/=-]+$/);
    expect(attributes.sort()).toEqual(["HttpOnly", "Path=/console", "SameSite=Strict", "Secure"]);
    for (const next of ["https://evil.example/", "//evil.example/console", "/api/v1/account", "/console/sign-in"]) {
      expect((await attempt({ email: op.email, password: op.password, next })).headers.location).toBe("/console");
    }
  });

  test("Redis holds the token's hash, never the token", async () => {
    // The session id inside the signed cookie value (s:<id>.<signature>).
    const token = /^s:([\w-]+)\./.exec(decodeURIComponent(session.cookie.split("=")[1]!))![1]!;
    const keys = await gw.deps.redis.keys(`${gw.deps.config.queuePrefix}:console:session:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join()).not.toContain(token);
    for (const key of keys) expect(await gw.deps.redis.get(key)).not.toContain(token);
  });

  test("the form refuses a missing token and another origin with 10006", async () => {
    const op = await createOperator(gw.deps.db);
    const noToken = await attempt({ email: op.email, password: op.password }, { omitToken: true });
    expect(noToken.status).toBe(403);
    expect(noToken.text).toContain('data-code="10006"');
    const crossSite = await attempt({ email: op.email, password: op.password }, { origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    expect(cookieFrom(crossSite, "gen_console")).toBeUndefined();
  });

  test("a disabled operator cannot sign in and loses open sessions", async () => {
    const op = await createOperator(gw.deps.db);
    const own = await signIn(gw, op);
    await disableOperator(gw.deps.db, op.email);
    expect((await html("/console", own.cookie)).status).toBe(302);
    expect((await attempt({ email: op.email, password: op.password })).status).toBe(401);
  });

  test("a password reset ends the operator's open sessions", async () => {
    const op = await createOperator(gw.deps.db);
    const own = await signIn(gw, op);
    await gw.deps.db.$kysely
      .updateTable("operators")
      .set({ password_hash: await hashPassword("the new long password") })
      .where("email", "=", op.email)
      .execute();
    expect((await html("/console", own.cookie)).status).toBe(302);
    await signIn(gw, { email: op.email, password: "the new long password" });
  });

  test("signing in again ends the session the browser carried", async () => {
    const own = await signIn(gw);
    const form = signInForm(await html("/console/sign-in", own.cookie));
    const res = await request(gw.app)
      .post("/console/sign-in")
      .set("Cookie", `${own.cookie}; ${form.cookie}`)
      .type("form")
      .send({ _csrf: form.token, email: own.email, password: own.password });
    expect(res.status).toBe(303);
    expect((await html("/console", own.cookie)).status).toBe(302);
    expect((await html("/console", cookieFrom(res, "gen_console"))).status).toBe(200);
  });

  test("sign-in attempts are rate limited", async () => {
    const strict = await createTestConsole({ CONSOLE_SIGN_IN_RATE_PER_MIN: "6", CONSOLE_SIGN_IN_BURST: "5" });
    try {
      const op = await createOperator(strict.deps.db);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await attempt({ email: op.email, password: "not it at all" }, { on: strict })).status);
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses.at(-1)).toBe(429);
      const right = await attempt({ email: op.email, password: op.password }, { on: strict });
      expect(right.status).toBe(429);
      expect(right.text).toContain("Too many sign-in attempts");
    } finally {
      await strict.close();
    }
  });
});

describe("with a session", () => {
  test("the home page shows both queues, with a strict CSP", async () => {
    const res = await html("/console", session.cookie);
    expect(res.status).toBe(200);
    expect(res.text).toContain(session.email);
    for (const name of Object.values(QUEUE_NAMES)) expect(res.text).toContain(`<th scope="row">${name}</th>`);
    expect(res.headers["content-security-policy"]).toContain("script-src 'none'");
    expect(res.headers["cache-control"]).toBe("no-store");
  });

  test("an unknown console path is a page for browsers and 40002 for scripts", async () => {
    expect((await html("/console/nope", session.cookie)).status).toBe(404);
    const api = await request(gw.app).get("/console/nope").set("Cookie", session.cookie);
    expect(api.status).toBe(404);
    expect(api.body.error.code).toBe(40002);
  });

  test("a state-changing form post without the CSRF token is refused", async () => {
    const browser = await request(gw.app).post("/console/sign-out").set("Cookie", session.cookie).set("Accept", "text/html").type("form").send({});
    expect(browser.status).toBe(403);
    expect(browser.text).toContain('data-code="10006"');
    const script = await request(gw.app)
      .post("/console/sign-out")
      .set("Cookie", session.cookie)
      .type("form")
      .send({ _csrf: "x".repeat(43) });
    expect(script.status).toBe(403);
    expect(script.body.error.code).toBe(10006);
    const crossSite = await request(gw.app)
      .post("/console/sign-out")
      .set("Cookie", session.cookie)
      .set("Origin", "https://evil.example")
      .type("form")
      .send({ _csrf: session.csrfToken });
    expect(crossSite.status).toBe(403);
    expect((await html("/console", session.cookie)).status).toBe(200);
  });

  test("bull-board lists every queue; its state-changing API needs our origin", async () => {
    const page = await html("/console/queues", session.cookie);
    expect(page.status).toBe(200);
    // Its page runs only its own script files: no inline script may run there either.
    expect(page.headers["content-security-policy"]).toContain("script-src 'self';");
    const api = await request(gw.app).get("/console/queues/api/queues").set("Cookie", session.cookie);
    expect(api.status).toBe(200);
    expect((api.body.queues as { name: string }[]).map((q) => q.name).sort()).toEqual(Object.values(QUEUE_NAMES).sort());
    const path = `/console/queues/api/queues/${QUEUE_NAMES.generation}/pause`;
    expect((await request(gw.app).put(path).set("Cookie", session.cookie)).status).toBe(403);
    expect((await request(gw.app).put(path).set("Cookie", session.cookie).set("Origin", "https://evil.example")).status).toBe(403);
    expect(
      (await request(gw.app).put(path).set("Cookie", session.cookie).set("Sec-Fetch-Site", "cross-site").set("Origin", gw.deps.config.console.baseUrl)).status,
    ).toBe(403);
    const own = await request(gw.app).put(path).set("Cookie", session.cookie).set("Origin", gw.deps.config.console.baseUrl);
    expect(own.status).toBe(200);
    expect(await gw.deps.generationQueue.isPaused()).toBe(true);
    await gw.deps.generationQueue.resume();
  });

  test("sign-out ends the session everywhere", async () => {
    const own = await signIn(gw);
    const res = await request(gw.app).post("/console/sign-out").set("Cookie", own.cookie).type("form").send({ _csrf: own.csrfToken });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe("/console/sign-in");
    expect(cookieFrom(res, "gen_console")).toBe("gen_console=");
    expect((await request(gw.app).get("/console").set("Cookie", own.cookie)).status).toBe(401);
  });
});

describe("session lifetime", () => {
  test("a session ends after its idle time", async () => {
    const short = await createTestConsole({ CONSOLE_SESSION_IDLE_MS: "1000" });
    try {
      const own = await signIn(short);
      expect((await request(short.app).get("/console").set("Cookie", own.cookie)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1300));
      expect((await request(short.app).get("/console").set("Cookie", own.cookie)).status).toBe(401);
    } finally {
      await short.close();
    }
  });
});

describe("pnpm admin create-operator", () => {
  const admin = (args: string[], env: Record<string, string>, input?: string) => {
    const child = run("pnpm", ["--silent", "admin", ...args], { env: { ...process.env, ...env } });
    if (input !== undefined) child.child.stdin!.end(input);
    else child.child.stdin!.end();
    return child;
  };

  test("prints one JSON line and stores only a scrypt hash", async () => {
    const email = `cli-${Date.now()}@example.test`;
    const password = "a long operator password";
    const { stdout } = await admin(["create-operator", "--email", email], { OPERATOR_PASSWORD: password });
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({ operator_id: expect.stringMatching(/^opr_[0-9a-f]{24}$/), email });
    const row = (await findOperatorByEmail(gw.deps.db, email))!;
    expect(row.passwordHash).toMatch(/^scrypt\$/);
    expect(row.passwordHash).not.toContain(password);
    await signIn(gw, { email, password });
  });

  test("reads the password from stdin and refuses short or overlong ones", async () => {
    const email = `cli-stdin-${Date.now()}@example.test`;
    await admin(["create-operator", "--email", email], {}, "another long password\n");
    await signIn(gw, { email, password: "another long password" });
    await expect(admin(["create-operator", "--email", `x${email}`], { OPERATOR_PASSWORD: "short" })).rejects.toMatchObject({ code: 2 });
    // Longer than the sign-in form reads: it could never be used.
    await expect(admin(["create-operator", "--email", `y${email}`], { OPERATOR_PASSWORD: "x".repeat(1025) })).rejects.toMatchObject({ code: 2 });
  });
});

describe("unreadable form bodies", () => {
  test.each([
    ["too many fields", "application/x-www-form-urlencoded", Array.from({ length: 60 }, (_, i) => `f${i}=1`).join("&"), 400, 20001],
    ["an unsupported charset", "application/x-www-form-urlencoded; charset=utf-16", "a=b", 400, 20001],
    ["over 16 KiB", "application/x-www-form-urlencoded", `a=${"x".repeat(17_000)}`, 413, 20008],
  ])("%s is a documented error, not a 500", async (_name, type, body, status, code) => {
    const res = await request(gw.app).post("/console/sign-in").set("Content-Type", type).send(body);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
  });
});
