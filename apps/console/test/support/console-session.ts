import request from "supertest";
import { insertOperator, type Database } from "@gen/db";
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
  await insertOperator(db, { id: newOperatorId(), email, passwordHash: await hashes.get(password)! });
  return { email, password };
}

/** Pulls `name=value` out of a response's Set-Cookie headers. */
export function cookieFrom(res: request.Response, name: string): string | undefined {
  const raw = res.headers["set-cookie"] as unknown as string[] | undefined;
  const line = raw?.find((c) => c.startsWith(`${name}=`));
  return line?.split(";")[0];
}

/** What a browser posts back from a served sign-in form: its cookies (the CSRF cookie and the pre-sign-in session it is bound to) and its token. */
export function signInForm(res: request.Response): { cookie: string; token: string } {
  const cookie = ["gen_console_csrf", "gen_console_pre"].map((name) => cookieFrom(res, name) ?? "").join("; ");
  return { cookie, token: /name="_csrf" value="([^"]+)"/.exec(res.text)![1]! };
}

/** Signs in through the real form (CSRF cookie, POST) and reads the session's CSRF token off a page (the console app, or the gateway that mounts it). */
export async function signIn(
  gw: { app: Parameters<typeof request>[0]; deps: Pick<TestConsole["deps"], "db"> },
  operator?: { email: string; password: string },
): Promise<ConsoleOperatorSession> {
  const { email, password } = operator ?? (await createOperator(gw.deps.db));
  const form = signInForm(await request(gw.app).get("/console/sign-in").set("Accept", "text/html"));
  const res = await request(gw.app).post("/console/sign-in").set("Cookie", form.cookie).type("form").send({ _csrf: form.token, email, password });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status} ${res.text.slice(0, 200)}`);
  const cookie = cookieFrom(res, "gen_console")!;
  const home = await request(gw.app).get("/console").set("Accept", "text/html").set("Cookie", cookie);
  const csrfToken = /name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
  return { email, password, cookie, csrfToken };
}
