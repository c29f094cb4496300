import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { BLOCKED_NAME_SUFFIX, ledgerHolds, startStack, type Stack } from "./stack.ts";

// A compromised upstream (the simulator's hostile directives) tries to make the worker fetch an
// address it must not reach, and to publish bytes under a false type. 127.0.0.2 stands for the
// metadata service: loopback, outside the stack's UPSTREAM_ALLOWED_CIDRS (default: 127.0.0.1,
// UPSTREAM_URL's address); `*.blocked.test` resolves to it through the stack's injected resolver.
let stack: Stack;
let user: { userId: string; auth: string };
let metadata: http.Server;
let metadataPort = 0;
let metadataConnections = 0;

beforeAll(async () => {
  metadata = http.createServer((_req, res) => res.end("instance credentials"));
  metadata.on("connection", () => metadataConnections++);
  await new Promise<void>((resolve) => metadata.listen(0, "127.0.0.2", resolve));
  metadataPort = (metadata.address() as AddressInfo).port;
  stack = await startStack();
  stack.startWorker();
  user = await stack.user();
});
afterAll(async () => {
  await stack.close();
  metadata.closeAllConnections();
  await new Promise((resolve) => metadata.close(resolve));
});
afterEach(() => ledgerHolds(stack, user.userId));

const HOSTILE: [name: string, directive: () => string][] = [
  ["an output URL naming the metadata service", () => `[[up:output_url=http://metadata${BLOCKED_NAME_SUFFIX}:${metadataPort}/latest/meta-data/]]`],
  ["an output URL with the metadata address as a literal", () => `[[up:output_url=http://127.0.0.2:${metadataPort}/latest/meta-data/]]`],
  ["a file URL redirecting to the metadata service", () => `[[up:redirect_file=http://metadata${BLOCKED_NAME_SUFFIX}:${metadataPort}/latest/meta-data/]]`],
  ["a file URL redirecting to the metadata address", () => `[[up:redirect_file=http://127.0.0.2:${metadataPort}/latest/meta-data/]]`],
  ["an HTML page served as image/png", () => "[[up:mislabel]]"],
  ["an image served as text/plain", () => "[[up:file_type=text/plain]]"],
  ["an image served as application/json", () => "[[up:file_type=application/json]]"],
];

describe("a hostile upstream's outputs fail the task with 80005, fully refunded, nothing published", () => {
  test.each(HOSTILE)("%s", async (_name, directive) => {
    const before = (await stack.get(user.auth, "/api/v1/account")).body.credits;
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "upstream-image-1", prompt: `a boat ${directive()}` });
    expect(submitted.status).toBe(202);
    const task = await stack.waitTerminal(user.auth, submitted.body.id);
    expect(task).toMatchObject({ status: "failed", output: null, usage: { credits: 0 }, error: { code: 80005 } });
    expect(task.billing.refunded_credits).toBe(task.billing.reserved_credits);
    expect((await stack.get(user.auth, "/api/v1/account")).body.credits).toBe(before);
    expect(existsSync(path.join(stack.config.storage.dir, "tasks", submitted.body.id))).toBe(false);
    expect(metadataConnections).toBe(0);
  });

  test("the same upstream's honest output still completes (its own address is allowed by default)", async () => {
    const id = (await stack.submit(user.auth, "/api/v1/images/generations", { model: "upstream-image-1", prompt: "an honest boat" })).body.id;
    const task = await stack.waitTerminal(user.auth, id);
    expect(task.status).toBe("completed");
    expect(task.output.image_urls).toHaveLength(1);
    // The check above for the failed tasks looks where a stored file would be.
    expect(existsSync(path.join(stack.config.storage.dir, "tasks", id))).toBe(true);
  });
});
