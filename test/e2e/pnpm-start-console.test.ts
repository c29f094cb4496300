import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { freePort } from "../support/free-port.ts";
import { testPrefix } from "../support/run-scope.ts";
import { startPnpmScript, type PnpmScript } from "./pnpm-script.ts";

// `pnpm start:console`: the operations console alone on CONSOLE_PORT, exactly the documented command.
const run = promisify(execFile);
let service: PnpmScript | undefined;
let base = "";
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  env = {
    ...process.env,
    NODE_OPTIONS: "",
    CONSOLE_PORT: String(port),
    CONSOLE_BASE_URL: base,
    QUEUE_PREFIX: testPrefix("console"),
    LOG_LEVEL: "warn",
  };
  service = await startPnpmScript("start:console", env, `${base}/console/sign-in`);
}, 40_000);

afterAll(() => service?.stop());

const cookie = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .find((line) => line.startsWith(`${name}=`))
    ?.split(";")[0] ?? "";

test("an operator made with pnpm admin signs in on CONSOLE_PORT and sees the console", async () => {
  const email = `start-console-${randomBytes(3).toString("hex")}@example.test`;
  const password = "a long operator password";
  await run("pnpm", ["--silent", "admin", "create-operator", "--email", email], { env: { ...env, OPERATOR_PASSWORD: password } });
  const form = await fetch(`${base}/console/sign-in`, { headers: { Accept: "text/html" } });
  // The CSRF cookie and the pre-sign-in session it is bound to.
  const formCookies = `${cookie(form, "gen_console_csrf")}; ${cookie(form, "gen_console_pre")}`;
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const signedIn = await fetch(`${base}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: formCookies, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: token, email, password }),
  });
  expect(signedIn.status).toBe(303);
  const home = await fetch(`${base}/console`, { headers: { Accept: "text/html", Cookie: cookie(signedIn, "gen_console") } });
  expect(home.status).toBe(200);
  expect(await home.text()).toContain(email);
  // The API is not served here.
  expect((await fetch(`${base}/api/v1/account`)).status).toBe(404);
}, 60_000);

test("SIGTERM stops it within a bounded time", async () => {
  const started = Date.now();
  const exited = new Promise<number | null>((resolve) => service!.child.once("exit", (code) => resolve(code)));
  process.kill(-service!.child.pid!, "SIGTERM");
  await exited;
  expect(Date.now() - started).toBeLessThan(20_000);
  await expect(fetch(`${base}/console/sign-in`)).rejects.toThrow();
}, 30_000);

test("without Redis it fails with one clear line", async () => {
  const result = await run("pnpm", ["start:console"], { env: { ...env, REDIS_URL: "redis://127.0.0.1:1" } }).then(
    () => ({ code: 0, stderr: "" }),
    (error: { code: number; stderr: string }) => error,
  );
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^console: Redis does not answer at 127\.0\.0\.1:1 \(REDIS_URL\)/);
}, 30_000);
