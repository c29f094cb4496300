import request from "supertest";
import { createTestGateway, createUser, type TestGateway, type TestUser } from "./support/test-gateway.ts";

// Found by the fault suite's fuzzer: Express throws a URIError for a path segment with broken
// percent-encoding, which used to reach the client as 500/60099.
let gw: TestGateway;
let user: TestUser;

beforeAll(async () => {
  gw = await createTestGateway();
  user = await createUser(gw.deps.db);
});
afterAll(() => gw.close());

test.each([
  ["GET", "/api/v1/tasks/%zz"],
  ["GET", "/api/v1/tasks/%"],
  ["POST", "/api/v1/tasks/task_%ff%fe/cancel"],
])("%s %s is 404 with 40002, not a 500", async (method, path) => {
  const res = await request(gw.app)[method.toLowerCase() as "get"](path).set("Authorization", user.auth).set("Accept", "application/json");
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe(40002);
});

test("console assets answer only GET; anything else goes through the session check", async () => {
  const res = await request(gw.app).put("/console/assets/console.css").set("Accept", "application/json");
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe(10005);
  expect((await request(gw.app).get("/console/assets/console.css")).status).toBe(200);
});
