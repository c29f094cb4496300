import { randomBytes, scryptSync } from "node:crypto";
import { findOperatorByEmail, insertOperator } from "@gen/db";
import { setTimeout as delay } from "node:timers/promises";
import request from "supertest";
import { newOperatorId } from "@gen/ids";
import { cookieFrom, createOperator, signInForm } from "./support/console-session.ts";
import { createTestConsole, type TestConsole } from "./support/test-console.ts";

// Requests come from loopback; with TRUST_PROXY=loopback, X-Forwarded-For is the client address as
// a proxy on this host would send it, so one test can play several addresses.
function gatewayBehindProxy(env: Record<string, string>): Promise<TestConsole> {
  return createTestConsole({ TRUST_PROXY: "loopback", ...env });
}

async function attempt(gw: TestConsole, address: string, email: string, password: string) {
  const { cookie, token } = signInForm(await request(gw.app).get("/console/sign-in").set("Accept", "text/html").set("X-Forwarded-For", address));
  return request(gw.app)
    .post("/console/sign-in")
    .set("Cookie", cookie)
    .set("Accept", "text/html")
    .set("X-Forwarded-For", address)
    .type("form")
    .send({ _csrf: token, email, password });
}

describe("per-account back-off", () => {
  let gw: TestConsole;
  beforeAll(async () => {
    gw = await gatewayBehindProxy({ CONSOLE_SIGN_IN_RATE_PER_MIN: "6000", CONSOLE_SIGN_IN_BURST: "1000" });
  });
  afterAll(() => gw.close());

  test("failures from one address make that address wait, doubling; the operator elsewhere is not slowed", async () => {
    const op = await createOperator(gw.deps.db);
    const attacker = "198.51.100.7";
    for (let i = 0; i < 5; i++) expect((await attempt(gw, attacker, op.email, "guess number " + i)).status).toBe(401);
    const waiting = await attempt(gw, attacker, op.email, op.password);
    expect(waiting.status).toBe(429);
    expect(waiting.text).toContain("wait 1 seconds");
    expect((await attempt(gw, attacker, op.email, "again")).status).toBe(429);

    // The operator at another address signs in at once.
    expect((await attempt(gw, "203.0.113.20", op.email, op.password)).status).toBe(303);

    // The waits count from the end of the last failure.
    await delay(1100);
    expect((await attempt(gw, attacker, op.email, "sixth guess")).status).toBe(401);
    const longer = await attempt(gw, attacker, op.email, "seventh guess");
    expect(longer.status).toBe(429);
    expect(longer.text).toContain("wait 2 seconds");
  });

  test("parallel attempts cannot all slip through one wait", async () => {
    const op = await createOperator(gw.deps.db);
    const attacker = "198.51.100.8";
    for (let i = 0; i < 5; i++) expect((await attempt(gw, attacker, op.email, "guess " + i)).status).toBe(401);
    await delay(1100);
    const statuses = (await Promise.all(Array.from({ length: 5 }, (_, i) => attempt(gw, attacker, op.email, "burst " + i)))).map((r) => r.status).sort();
    expect(statuses).toEqual([401, 429, 429, 429, 429]);
  });

  test("a successful sign-in clears the address's failures", async () => {
    const op = await createOperator(gw.deps.db);
    const address = "203.0.113.30";
    for (let i = 0; i < 4; i++) expect((await attempt(gw, address, op.email, "typo " + i)).status).toBe(401);
    expect((await attempt(gw, address, op.email, op.password)).status).toBe(303);
    for (let i = 0; i < 5; i++) expect((await attempt(gw, address, op.email, "typo again " + i)).status).toBe(401);
  });

  test("an unknown e-mail is limited the same way (no account enumeration)", async () => {
    const email = "nobody-at-all@example.test";
    for (let i = 0; i < 5; i++) expect((await attempt(gw, "198.51.100.9", email, "x" + i)).status).toBe(401);
    expect((await attempt(gw, "198.51.100.9", email, "x")).status).toBe(429);
  });
});

describe("per-account bucket", () => {
  test("many addresses exhaust it for unknown addresses only: the operator's known address still signs in", async () => {
    // One token back per 1,000 s: each sign-in hashes a password (scrypt), and on a busy machine these nine
    // took longer than the 10 s a rate of 6 a minute refills one in, which let a fifth spray through (401).
    const gw = await gatewayBehindProxy({ CONSOLE_SIGN_IN_RATE_PER_MIN: "0.06", CONSOLE_SIGN_IN_BURST: "5" });
    try {
      const op = await createOperator(gw.deps.db);
      const home = "203.0.113.40";
      expect((await attempt(gw, home, op.email, op.password)).status).toBe(303);
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await attempt(gw, `198.51.100.${100 + i}`, op.email, "spray " + i)).status);
      // The home sign-in took one token of the account bucket too: 4 more failures, then 429s.
      expect(statuses).toEqual([401, 401, 401, 401, 429, 429, 429]);
      expect((await attempt(gw, "198.51.100.200", op.email, op.password)).status).toBe(429);
      expect((await attempt(gw, home, op.email, op.password)).status).toBe(303);
    } finally {
      await gw.close();
    }
  });
});

test("an operator whose hash has older scrypt parameters signs in, and the hash is raised to today's", async () => {
  const gw = await gatewayBehindProxy({ CONSOLE_SIGN_IN_RATE_PER_MIN: "6000", CONSOLE_SIGN_IN_BURST: "1000" });
  try {
    const email = `legacy-${randomBytes(4).toString("hex")}@example.test`;
    const password = "an operator from the first release";
    const salt = randomBytes(16);
    const legacy = [
      "scrypt",
      2 ** 15,
      8,
      1,
      salt.toString("base64url"),
      scryptSync(password, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }).toString("base64url"),
    ].join("$");
    await insertOperator(gw.deps.db, { id: newOperatorId(), email, passwordHash: legacy });
    const first = await attempt(gw, "203.0.113.50", email, password);
    expect(first.status).toBe(303);
    const stored = (await findOperatorByEmail(gw.deps.db, email))!.passwordHash;
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$/);
    // The session made at that sign-in carries the new hash's stamp, so it stays valid.
    const cookie = cookieFrom(first, "gen_console")!;
    expect((await request(gw.app).get("/console").set("Accept", "text/html").set("Cookie", cookie)).status).toBe(200);
    expect((await attempt(gw, "203.0.113.50", email, password)).status).toBe(303);
  } finally {
    await gw.close();
  }
});

describe("TRUST_PROXY", () => {
  const spread = async (gw: TestConsole, email: string) => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await attempt(gw, `198.51.100.${10 + i}`, email, "wrong " + i)).status);
    return statuses;
  };

  test("off (the default): X-Forwarded-For is the client's own claim and is ignored", async () => {
    const gw = await createTestConsole({ CONSOLE_SIGN_IN_RATE_PER_MIN: "6", CONSOLE_SIGN_IN_BURST: "2" });
    try {
      // One per-address bucket for all four, whatever the header says.
      expect(await spread(gw, "off@example.test")).toEqual([401, 401, 429, 429]);
    } finally {
      await gw.close();
    }
  });

  test("set to the proxy's address: req.ip is the client behind it, one bucket each", async () => {
    const gw = await gatewayBehindProxy({ CONSOLE_SIGN_IN_RATE_PER_MIN: "6", CONSOLE_SIGN_IN_BURST: "2" });
    try {
      // Per-address buckets are separate now; the per-account bucket (burst 2) is what stops them.
      const statuses = await spread(gw, "on@example.test");
      expect(statuses.slice(0, 2)).toEqual([401, 401]);
      // A different account from those addresses is not limited by the first account's failures.
      expect((await attempt(gw, "198.51.100.10", "other@example.test", "x")).status).toBe(401);
    } finally {
      await gw.close();
    }
  });
});
