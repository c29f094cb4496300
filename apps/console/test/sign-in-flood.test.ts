import { scrypt } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import request from "supertest";
import { hashingQueue } from "@gen/passwords";
import { createOperator, signInForm } from "./support/console-session.ts";
import { createTestConsole, type TestConsole } from "./support/test-console.ts";
import { until } from "../../../test/support/until.ts";

// Requests come from loopback; with TRUST_PROXY=loopback, X-Forwarded-For is the client address as
// a proxy on this host would send it, so one test can play many addresses (here, one IPv6 /64).
let gw: TestConsole;
// One listener for the whole file: 60 requests at once should cost the flood, not 60 listeners.
let server: http.Server;
beforeAll(async () => {
  gw = await createTestConsole({ TRUST_PROXY: "loopback" });
  server = gw.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await gw.close();
});

const form = (address: string) => request(server).get("/console/sign-in").set("Accept", "text/html").set("X-Forwarded-For", address).then(signInForm);

async function post(address: string, fields: Record<string, string>, served?: { cookie: string; token: string }) {
  const { cookie, token } = served ?? (await form(address));
  return request(server)
    .post("/console/sign-in")
    .set("Cookie", cookie)
    .set("Accept", "text/html")
    .set("X-Forwarded-For", address)
    .type("form")
    .send({ _csrf: token, ...fields });
}

/** Takes both hashing slots with work of the test's own, so the next sign-in's hash has to wait. */
async function holdHashingSlots(): Promise<() => Promise<void>> {
  await until(() => hashingQueue.stats().running === 0 && hashingQueue.stats().waiting === 0, "the hashing queue to drain");
  const releases: (() => void)[] = [];
  // Unnamed, like the admin CLI's hashes: one caller may hold both slots.
  const held = [0, 1].map(() => hashingQueue.run(() => new Promise<void>((resolve) => releases.push(resolve))));
  await until(() => releases.length === 2, "the test to hold both slots");
  return async () => {
    for (const release of releases) release();
    await Promise.all(held);
  };
}

const allFailureKeys = () => gw.deps.redis.keys(`${gw.deps.config.queuePrefix}:console:signin-fail:*`);

/** Failure records written since `failureKeysNow` was called (the flood test leaves its own). */
async function failureKeysNow(): Promise<() => Promise<string[]>> {
  const before = new Set(await allFailureKeys());
  return async () => (await allFailureKeys()).filter((key) => !before.has(key));
}

// The bound: 2 s for an operator whose sign-in takes 0.8 s on an idle machine, where the
// two hashing slots run on two free cores. On a loaded machine the bound grows in proportion to the
// operator's own unflooded time and to how much slower two hashes at once are than one (1 on two
// free cores), both measured just before: the operator's hash runs beside one of the flood's.
const IDLE_SIGN_IN_MS = 800;
const FLOODED_SIGN_IN_MS = 2000;

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

async function parallelHashSlowdown(): Promise<number> {
  // The parameters of a hash today (packages/passwords/src/scrypt-params.ts).
  const hash = () => scryptAsync("x", Buffer.alloc(16), 32, { N: 2 ** 17, r: 8, p: 1, maxmem: 256 * 1024 * 1024 });
  const oneStarted = performance.now();
  await hash();
  const one = performance.now() - oneStarted;
  const twoStarted = performance.now();
  await Promise.all([hash(), hash()]);
  return Math.max(1, (performance.now() - twoStarted) / one);
}

test("a flood from one IPv6 /64 gets 429s and the operator elsewhere is signed in within 2 s", async () => {
  const op = await createOperator(gw.deps.db);
  const operatorAddress = "203.0.113.61";
  // The operator's browser has the form already; signing in is the post.
  const timed = async (served: { cookie: string; token: string }) => {
    const started = performance.now();
    const answer = await post(operatorAddress, { email: op.email, password: op.password }, served);
    return { status: answer.status, ms: performance.now() - started };
  };
  // Unflooded, the median of three: one sample on a shared machine may be unusually quick.
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) {
    const one = await timed(await form(operatorAddress));
    expect(one.status).toBe(303);
    samples.push(one.ms);
  }
  const alone = { ms: samples.sort((a, b) => a - b)[1]! };
  const slowdown = await parallelHashSlowdown();

  const flood = Array.from({ length: 60 }, (_, i) => `2001:db8:f100:d:${(i + 1).toString(16)}:${(i * 37).toString(16)}:beef:${i.toString(16)}`);
  // Each flooding client has served itself a form, as a script would; then all 60 post at once.
  const forms = await Promise.all(flood.map((address) => form(address)));
  const operatorForm = await form(operatorAddress);
  const hashesBefore = hashingQueue.stats().started;
  const floodAnswers = Promise.all(flood.map((address, i) => post(address, { email: `target-${i}@example.test`, password: "wrong guess " + i }, forms[i])));
  const flooded = await timed(operatorForm);
  const statuses = (await floodAnswers).map((r) => r.status);
  const count = (status: number) => statuses.filter((s) => s === status).length;
  const bound = FLOODED_SIGN_IN_MS * Math.max(1, alone.ms / IDLE_SIGN_IN_MS) * slowdown;
  console.log(
    `sign-in flood: operator signed in after ${flooded.ms.toFixed(0)} ms during the flood (${alone.ms.toFixed(0)} ms alone, two hashes at once ${slowdown.toFixed(2)}x slower than one; bound ${bound.toFixed(0)} ms); ` +
      `60 sign-ins from one /64: ${count(401)} checked (401), ${count(429)} refused (429); ${hashingQueue.stats().started - hashesBefore} hashes in all`,
  );
  expect(flooded.status).toBe(303);
  expect(flooded.ms).toBeLessThan(bound);
  expect(count(401) + count(429)).toBe(60);
  // The /64 has one bucket of CONSOLE_SIGN_IN_BURST (10): at most that many were even considered.
  expect(count(401)).toBeLessThanOrEqual(10);
  const refused = (await floodAnswers).find((r) => r.status === 429)!;
  expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  expect(refused.text).toContain("Too many sign-in");
}, 120_000);

/** A form post on a socket of the test's own, so that the test can close it before the answer. */
function rawPost(served: { cookie: string; token: string }, address: string, fields: Record<string, string>): http.ClientRequest {
  const body = new URLSearchParams({ _csrf: served.token, ...fields }).toString();
  const sent = http.request({
    host: "127.0.0.1",
    port: (server.address() as AddressInfo).port,
    method: "POST",
    path: "/console/sign-in",
    headers: {
      Cookie: served.cookie,
      "X-Forwarded-For": address,
      "Content-Type": "application/x-www-form-urlencoded",
      "Content-Length": Buffer.byteLength(body),
    },
  });
  sent.on("error", () => {});
  sent.end(body);
  return sent;
}

/** A browser's cookie jar: the later cookies replace the earlier ones of the same name. */
function mergeCookies(earlier: string, later: string): string {
  const jar = new Map<string, string>();
  for (const cookie of `${earlier}; ${later}`.split("; ").filter(Boolean)) jar.set(cookie.split("=")[0]!, cookie);
  return [...jar.values()].join("; ");
}

test("a client that closes its connection before its hash starts costs no hash", async () => {
  const op = await createOperator(gw.deps.db);
  const served = await form("203.0.113.62");
  const newFailureKeys = await failureKeysNow();
  const release = await holdHashingSlots();
  try {
    const before = hashingQueue.stats().started;
    const sent = rawPost(served, "203.0.113.62", { email: op.email, password: "a guess" });
    await until(() => hashingQueue.stats().waiting === 1, "the sign-in to wait for a hashing slot");
    sent.destroy();
    await until(() => hashingQueue.stats().waiting === 0, "the abandoned sign-in to leave the queue");
    await release();
    await delay(200);
    expect(hashingQueue.stats().started).toBe(before);
    // Not checked, so not a failure either.
    expect(await newFailureKeys()).toEqual([]);
  } finally {
    await release();
  }
});

test("a failure record is written only once the password check has failed; a right password writes none", async () => {
  const op = await createOperator(gw.deps.db);
  for (const [address, password, status] of [
    ["203.0.113.63", op.password, 303],
    ["203.0.113.64", "not the password", 401],
  ] as const) {
    const newFailureKeys = await failureKeysNow();
    const release = await holdHashingSlots();
    try {
      const answer = post(address, { email: op.email, password });
      await until(() => hashingQueue.stats().waiting === 1, "the sign-in to wait for a hashing slot");
      // Past the limits, before the check: nothing written yet.
      expect(await newFailureKeys()).toEqual([]);
      await release();
      expect((await answer).status).toBe(status);
    } finally {
      await release();
    }
    const keys = await newFailureKeys();
    if (status === 303) expect(keys).toEqual([]);
    else {
      expect(keys).toHaveLength(1);
      expect(await gw.deps.redis.hget(keys[0]!, "count")).toBe("1");
      await gw.deps.redis.del(keys[0]!);
    }
  }
});

test("the hashing queue is bounded: a client past its line is refused at once with 429 and Retry-After", async () => {
  const op = await createOperator(gw.deps.db);
  const release = await holdHashingSlots();
  try {
    // One /64's line holds two; the third from it is refused without waiting.
    const waiting = [post("2001:db8:f200::1", { email: op.email, password: "x1" }), post("2001:db8:f200::2", { email: op.email, password: "x2" })];
    await until(() => hashingQueue.stats().waiting === 2, "two sign-ins to wait");
    const refused = await post("2001:db8:f200::3", { email: op.email, password: "x3" });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(refused.text).toContain("Too many sign-ins at once");
    await release();
    expect((await Promise.all(waiting)).map((r) => r.status)).toEqual([401, 401]);
  } finally {
    await release();
  }
});

describe("the sign-in form's CSRF pair", () => {
  test("is bound to its pre-sign-in session: a pair from one is refused with another", async () => {
    const op = await createOperator(gw.deps.db);
    const [mine, theirs] = await Promise.all([form("203.0.113.65"), form("203.0.113.65")]);
    const pre = (cookie: string) => cookie.split("; ").find((c) => c.startsWith("gen_console_pre="))!;
    const csrf = (cookie: string) => cookie.split("; ").find((c) => c.startsWith("gen_console_csrf="))!;
    expect(pre(mine.cookie)).not.toBe(pre(theirs.cookie));
    const fields = { email: op.email, password: op.password };
    // Their CSRF cookie and token, my pre-sign-in session.
    const swapped = await post("203.0.113.65", fields, { cookie: `${csrf(theirs.cookie)}; ${pre(mine.cookie)}`, token: theirs.token });
    expect(swapped.status).toBe(403);
    // No pre-sign-in session at all.
    expect((await post("203.0.113.65", fields, { cookie: csrf(mine.cookie), token: mine.token })).status).toBe(403);
    // A form served again is a fresh pre-sign-in session: both cookies replaced, a new pair.
    const again = await request(server)
      .get("/console/sign-in")
      .set("Accept", "text/html")
      .set("Cookie", `${csrf(theirs.cookie)}; ${pre(mine.cookie)}`);
    expect(again.status).toBe(200);
    const renewed = signInForm(again);
    expect(pre(renewed.cookie)).not.toBe(pre(mine.cookie));
    expect(renewed.token).not.toBe(theirs.token);
    // The whole pair of one session works.
    expect((await post("203.0.113.65", fields, renewed)).status).toBe(303);
  });

  test("a post whose connection closed before its answer leaves the browser able to sign in with the next form", async () => {
    const op = await createOperator(gw.deps.db);
    const address = "203.0.113.67";
    const served = await form(address);
    const release = await holdHashingSlots();
    try {
      const sent = rawPost(served, address, { email: op.email, password: op.password });
      await until(() => hashingQueue.stats().waiting === 1, "the sign-in to wait for a hashing slot");
      sent.destroy();
      await until(() => hashingQueue.stats().waiting === 0, "the abandoned sign-in to leave the queue");
    } finally {
      await release();
    }
    // The browser got no answer, so it still holds the posted form's cookies when it opens the page again.
    const reopened = await request(server).get("/console/sign-in").set("Accept", "text/html").set("X-Forwarded-For", address).set("Cookie", served.cookie);
    expect(reopened.status).toBe(200);
    const next = { ...signInForm(reopened), cookie: mergeCookies(served.cookie, signInForm(reopened).cookie) };
    expect((await post(address, { email: op.email, password: op.password }, next)).status).toBe(303);
  });

  test("a used form posted again is refused and its cookies cleared", async () => {
    const op = await createOperator(gw.deps.db);
    const served = await form("203.0.113.68");
    expect((await post("203.0.113.68", { email: op.email, password: "typo" }, served)).status).toBe(401);
    const replayed = await post("203.0.113.68", { email: op.email, password: op.password }, served);
    expect(replayed.status).toBe(403);
    const cleared = ([] as string[]).concat(replayed.headers["set-cookie"] ?? []);
    for (const name of ["gen_console_pre", "gen_console_csrf"]) expect(cleared).toContainEqual(expect.stringMatching(new RegExp(`^${name}=;`)));
  });

  test("serves one attempt: posting the same form again is refused, and the form served after a failure is fresh", async () => {
    const op = await createOperator(gw.deps.db);
    const served = await form("203.0.113.66");
    const first = await post("203.0.113.66", { email: op.email, password: "typo" }, served);
    expect(first.status).toBe(401);
    expect((await post("203.0.113.66", { email: op.email, password: op.password }, served)).status).toBe(403);
    const again = signInForm(first);
    expect(again.token).not.toBe(served.token);
    expect((await post("203.0.113.66", { email: op.email, password: op.password }, again)).status).toBe(303);
  });
});

test("posts from one address past its limit get 429 and write nothing more to Redis", async () => {
  const address = "203.0.113.69";
  const { signInRate } = gw.deps.config.console;
  const consumeKeys = async () => (await gw.deps.redis.keys(`${gw.deps.config.queuePrefix}:console:pre-sign-in:*`)).length;
  const before = await consumeKeys();
  for (let i = 0; i < 20; i++) {
    // The address's bucket, emptied through the limiter itself (no hash to wait for), again before
    // each post in case it refilled meanwhile.
    while ((await gw.deps.rateLimiter.take("sign-in", `ip:${address}`, signInRate)).allowed);
    const answer = await post(address, { email: `nobody-${i}@example.test`, password: "a guess" });
    expect(answer.status).toBe(429);
  }
  const after = await consumeKeys();
  console.log(`20 refused sign-ins from one address: ${after - before} pre-sign-in keys written`);
  expect(after).toBe(before);
});
