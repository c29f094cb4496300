import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import request from "supertest";
import { createTestGateway, type TestGateway } from "./support/test-gateway.ts";

// Stored files hold bytes an upstream chose; without nosniff a browser may render a "text/plain"
// or unknown-typed file as HTML on the CDN's origin.
let gw: TestGateway;
const dir = `tasks/nosniff-${process.pid}`;
const archive = `archive/tasks/nosniff-${process.pid}`;

beforeAll(async () => {
  gw = await createTestGateway();
  const root = path.join(gw.deps.config.storage.dir, dir);
  await mkdir(root, { recursive: true });
  await writeFile(path.join(root, "0.txt"), "<html><script>alert(1)</script>");
  await writeFile(path.join(root, "1.bin"), "<html><script>alert(1)</script>");
  await writeFile(path.join(root, "2.png"), Buffer.from("89504e470d0a1a0a", "hex"));
  await mkdir(path.join(gw.deps.config.storage.dir, archive), { recursive: true });
  await writeFile(path.join(gw.deps.config.storage.dir, archive, "0.jsonl"), '{"id":"task_1"}\n');
});
afterAll(async () => {
  await rm(path.join(gw.deps.config.storage.dir, dir), { recursive: true, force: true });
  await rm(path.join(gw.deps.config.storage.dir, archive), { recursive: true, force: true });
  await gw.close();
});

test.each([
  [`/cdn/${dir}/0.txt`, 200],
  [`/cdn/${dir}/1.bin`, 200],
  [`/cdn/${dir}/2.png`, 200],
  [`/cdn/${dir}/missing.png`, 404],
  [`/cdn/${dir}/`, 404],
])("%s answers %i with X-Content-Type-Options: nosniff", async (url, status) => {
  const res = await request(gw.app).get(url);
  expect(res.status).toBe(status);
  expect(res.headers["x-content-type-options"]).toBe("nosniff");
});

test("HEAD too", async () => {
  const res = await request(gw.app).head(`/cdn/${dir}/2.png`);
  expect(res.status).toBe(200);
  expect(res.headers["x-content-type-options"]).toBe("nosniff");
});

// The task archive shares the storage directory and holds every user's inputs.
test.each([
  `/cdn/${archive}/0.jsonl`,
  `/cdn/%61rchive/tasks/nosniff-${process.pid}/0.jsonl`,
  `/cdn/tasks/../${archive}/0.jsonl`,
  `/cdn/tasks/%2e%2e/${archive}/0.jsonl`,
])("the archive is never served: %s answers 404", async (url) => {
  const res = await request(gw.app).get(url);
  expect(res.status).toBe(404);
  expect(res.text).not.toContain("task_1");
});
