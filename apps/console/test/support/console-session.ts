import request from "supertest";
import type { Database } from "@gen/db";
import { newOperatorId } from "@gen/ids";
import { hashPassword } from "@gen/passwords";
import type { TestConsole } from "./test-console.ts";

export interface ConsoleOperatorSession {
  email: string;
  password: string;
  /** `Cookie` header value carrying the session. */
  cookie: string;
  csrfToken: string;
}

// One hash per password for the whole file: scrypt at full cost takes a few hundred milliseconds,
// and operators of a test differ by e-mail, not by salt.
const hashes = new Map<string, Promise<string>>();

export async function createOperator(
  db: Database,
  email = `ops-${Math.random().toString(36).slice(2)}@example.test`,
  password = "correct horse battery",
): Promise<{ email: string; password: string }> {
  if (!hashes.has(password)) hashes.set(password, hashPassword(password));
  await db.operator.create({ data: { id: newOperatorId(), email, passwordHash: await hashes.get(password)! } });
  return { email, password };
}

/** Pulls `name=value` out of a response's Set-Cookie headers. */
export function cookieFrom(res: request.Response, name: string): string | undefined {
  const raw = res.headers["set-cookie"] as unknown as string[] | undefined;
  const line = raw?.find((c) => c.startsWith(`${name}=`));
  return line?.split(";")[0];
}

/** Signs in through the real form (CSRF cookie, POST) and reads the session's CSRF token off a page. */
export async function signIn(gw: TestConsole, operator?: { email: string; password: string }): Promise<ConsoleOperatorSession> {
  const { email, password } = operator ?? (await createOperator(gw.deps.db));
  const form = await request(gw.app).get("/console/sign-in").set("Accept", "text/html");
  const csrfCookie = cookieFrom(form, "gen_console_csrf")!;
  const formToken = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
  const res = await request(gw.app).post("/console/sign-in").set("Cookie", csrfCookie).type("form").send({ _csrf: formToken, email, password });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status} ${res.text.slice(0, 200)}`);
  const cookie = cookieFrom(res, "gen_console")!;
  const home = await request(gw.app).get("/console").set("Accept", "text/html").set("Cookie", cookie);
  const csrfToken = /name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
  return { email, password, cookie, csrfToken };
}
