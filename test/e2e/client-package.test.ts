import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startStack, type Stack } from "./stack.ts";

// The SDK as a user gets it: `pnpm pack`, installed with plain npm in a directory outside the
// workspace (nothing of the workspace resolvable from there), a TypeScript program type-checked
// against the package's declarations (ESM and CommonJS), then run against a gateway on loopback.

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const CLIENT = path.join(ROOT, "packages/client");
const { version: SDK_VERSION } = JSON.parse(readFileSync(path.join(CLIENT, "package.json"), "utf8")) as { version: string };
const { version: TYPESCRIPT_VERSION } = JSON.parse(readFileSync(path.join(ROOT, "node_modules/typescript/package.json"), "utf8")) as { version: string };

let stack: Stack;
let dir: string;
let capture: http.Server;
const userAgents: string[] = [];

beforeAll(async () => {
  stack = await startStack({ GENERATION_TIMEOUT_MS: "10000" });
  stack.startWorker();
  dir = mkdtempSync(path.join(os.tmpdir(), "gen-client-package-"));
  // Where the program sends one more request, to see the User-Agent the installed package sends.
  capture = http.createServer((req, res) => {
    userAgents.push(req.headers["user-agent"] ?? "");
    res.writeHead(200, { "Content-Type": "application/json" }).end('{"credits":1}');
  });
  capture.listen(0, "127.0.0.1");
  await once(capture, "listening");
}, 60_000);
afterAll(async () => {
  await new Promise((resolve) => capture?.close(resolve));
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const PROGRAM = `import { GenApiError, GenClient, SDK_VERSION, type ImageRequest, type Task, type ImageOutput } from "@gen/client";

const client = new GenClient({ baseUrl: process.env.GEN_BASE_URL!, apiKey: process.env.GEN_API_KEY!, pollBackoff: { initialMs: 25, maxMs: 200 } });
const models = await client.models();
const done: Task<ImageOutput> = await client.run("images", { model: "sim-image-1", prompt: "a red fox", size: "256x256" }, { timeoutMs: 20_000 });
const page = await client.listTasks({ limit: 1, endpoint: "images" });
let refused: number | null = null;
await client.listTasks({ limit: 1000 }).catch((error: unknown) => {
  if (error instanceof GenApiError) refused = error.code;
});
// @ts-expect-error a size the model does not offer: the request types are exact per model
const wrongSize: ImageRequest = { model: "sim-image-1", prompt: "x", size: "999x999" };
await new GenClient({ baseUrl: process.env.CAPTURE_URL!, apiKey: "k" }).account();
console.log(JSON.stringify({ version: SDK_VERSION, models: models.map((m) => m.id), id: done.id, status: done.status, images: done.output?.image_urls.length, listed: page.data.map((t) => t.id), refused, wrongSize: wrongSize.size }));
`;

const COMMONJS = `import { GenClient, SDK_VERSION } from "@gen/client";
const client: GenClient = new GenClient({ baseUrl: "http://127.0.0.1:1", apiKey: "k" });
console.log(JSON.stringify({ version: SDK_VERSION, client: typeof client.run, loader: typeof require }));
`;

test("the packed SDK installs with plain npm outside the workspace, type-checks, and runs against the gateway", async () => {
  await run("pnpm", ["pack", "--config.ignore-scripts=true", "--pack-destination", dir], { cwd: CLIENT });
  const tarball = readdirSync(dir).find((name) => name.endsWith(".tgz"))!;
  expect(tarball).toBe(`gen-client-${SDK_VERSION}.tgz`);
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "sdk-user", private: true, type: "module" }));
  writeFileSync(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        strict: true,
        types: ["node"],
        outDir: "out",
        skipLibCheck: false,
      },
      include: ["main.ts", "commonjs.cts"],
    }),
  );
  writeFileSync(path.join(dir, "main.ts"), PROGRAM);
  writeFileSync(path.join(dir, "commonjs.cts"), COMMONJS);
  // Plain npm: none of the pnpm settings the test run inherits.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", `./${tarball}`, `typescript@${TYPESCRIPT_VERSION}`, "@types/node@20"], {
    cwd: dir,
    env,
  });
  // Type check and emit; a type error (or an unused @ts-expect-error) fails here.
  await run(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "."], { cwd: dir, env });

  const user = await stack.user();
  const { stdout } = await run(process.execPath, ["out/main.js"], {
    cwd: dir,
    env: {
      ...env,
      GEN_BASE_URL: stack.baseUrl,
      GEN_API_KEY: user.auth.replace(/^Bearer /, ""),
      CAPTURE_URL: `http://127.0.0.1:${(capture.address() as AddressInfo).port}`,
    },
  });
  const result = JSON.parse(stdout);
  expect(result).toMatchObject({ version: SDK_VERSION, status: "completed", images: 1, listed: [result.id], refused: 20003 });
  expect(result.models).toContain("sim-image-1");
  expect(userAgents).toEqual([expect.stringMatching(new RegExp(`^gen-client/${SDK_VERSION.replace(/\./g, "\\.")} node/`))]);

  const commonjs = await run(process.execPath, ["out/commonjs.cjs"], { cwd: dir, env });
  expect(JSON.parse(commonjs.stdout)).toEqual({ version: SDK_VERSION, client: "function", loader: "function" });
}, 90_000);
