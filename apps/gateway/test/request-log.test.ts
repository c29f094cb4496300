import { Writable } from "node:stream";
import request from "supertest";
import winston from "winston";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";

const lines: Record<string, unknown>[] = [];
let gw: TestGateway;
let user: TestUser;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const logger = winston.createLogger({ format: winston.format.json(), transports: [new winston.transports.Stream({ stream: sink })] });
  gw = await createTestGateway({}, () => ({ logger }));
  user = await createUser(gw.deps.db);
});
afterAll(() => gw.close());

test("one JSON line per request with request id, user id, status and duration; no secrets", async () => {
  const res = await request(gw.app)
    .post("/api/v1/images/generations")
    .set("Authorization", user.auth)
    .send({ model: "sim-image-1", prompt: "PROMPT-SECRET", webhook_url: "https://example.com/h?token=QUERY-SECRET" });
  await request(gw.app).get(`/api/v1/tasks/${res.body.id}?include=webhook&token=GET-QUERY-SECRET`).set("Authorization", user.auth);
  await request(gw.app).get("/api/v1/account").set("Authorization", "Bearer sk_badbadbad");
  await new Promise((resolve) => setTimeout(resolve, 50));

  const requests = lines.filter((line) => line.message === "request");
  expect(requests).toHaveLength(3);
  expect(requests[0]).toMatchObject({
    request_id: res.headers["x-request-id"],
    user_id: user.userId,
    method: "POST",
    path: "/api/v1/images/generations",
    status: 202,
  });
  expect(typeof requests[0]!.duration_ms).toBe("number");
  expect(requests[1]!.path).toBe(`/api/v1/tasks/${res.body.id}`);
  expect(requests[2]).toMatchObject({ user_id: null, status: 401 });
  const all = JSON.stringify(lines);
  for (const secret of ["PROMPT-SECRET", "QUERY-SECRET", user.auth.slice(7), "sk_badbadbad"]) expect(all).not.toContain(secret);
});
