import request from "supertest";
import { createUpstreamSim } from "../src/index.ts";

// The wire details of the provider simulators that their SDKs take care of, checked on the wire.
const app = createUpstreamSim({ publicUrl: "http://sim.test" });

describe("Replicate simulator", () => {
  it("refuses a request without a token with problem JSON, and takes Bearer or Token", async () => {
    const missing = await request(app)
      .post("/replicate/v1/models/acme/flux/predictions")
      .send({ input: { prompt: "p" } });
    expect(missing.status).toBe(401);
    expect(missing.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(missing.text)).toMatchObject({ status: 401, title: "Unauthenticated" });
    for (const scheme of ["Bearer", "Token"]) {
      const created = await request(app)
        .post("/replicate/v1/models/acme/flux/predictions")
        .set("Authorization", `${scheme} r8_x`)
        .send({ input: { prompt: "p" } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        status: "starting",
        model: "acme/flux",
        output: null,
        error: null,
        urls: { get: expect.stringMatching(/^http:\/\/sim\.test\/replicate\/v1\/predictions\//) },
      });
    }
  });

  it("refuses a webhook that is not a URL and an input that is not an object", async () => {
    const auth = { Authorization: "Bearer r8_x" };
    expect((await request(app).post("/replicate/v1/models/a/b/predictions").set(auth).send({ input: {}, webhook: "not a url" })).status).toBe(422);
    expect((await request(app).post("/replicate/v1/models/a/b/predictions").set(auth).send({ input: "p" })).status).toBe(422);
    expect((await request(app).post("/replicate/v1/predictions").set(auth).send({ input: {} })).status).toBe(422);
  });
});

describe("Runway simulator", () => {
  it("requires the bearer secret and X-Runway-Version", async () => {
    const body = { model: "gen4_turbo", promptImage: "https://example.com/a.png", ratio: "1280:720" };
    expect((await request(app).post("/runway/v1/image_to_video").set("X-Runway-Version", "2024-11-06").send(body)).status).toBe(401);
    const noVersion = await request(app).post("/runway/v1/image_to_video").set("Authorization", "Bearer key").send(body);
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.error).toContain("X-Runway-Version");
    const created = await request(app).post("/runway/v1/image_to_video").set("Authorization", "Bearer key").set("X-Runway-Version", "2024-11-06").send(body);
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  it("refuses text_to_video for an image-only model, and a body without its required fields", async () => {
    const auth = { Authorization: "Bearer key", "X-Runway-Version": "2024-11-06" };
    const imageOnly = await request(app).post("/runway/v1/text_to_video").set(auth).send({ model: "gen4_turbo", promptText: "p", ratio: "1280:720" });
    expect(imageOnly.status).toBe(400);
    expect(imageOnly.body).toMatchObject({ error: "Validation of body failed", issues: [{ message: expect.stringContaining("gen4_turbo") }] });
    expect((await request(app).post("/runway/v1/image_to_video").set(auth).send({ model: "gen4_turbo" })).status).toBe(400);
  });
});
