import request from "supertest";
import { createUpstreamSim } from "../src/index.ts";

function clock() {
  let time = 5_000;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

describe("upstream simulator protocol", () => {
  const time = clock();
  const app = createUpstreamSim({ now: time.now, publicUrl: "http://sim.test/" });

  it("answers 202 with a job id and a Location", async () => {
    const res = await request(app)
      .post("/v1/jobs")
      .send({ model: "m-image", input: { prompt: "p" } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.stringMatching(/^upj_[0-9a-f]{24}$/), status: "running" });
    expect(res.headers.location).toBe(`/v1/jobs/${res.body.id}`);
  });

  it.each([
    ["not JSON", "{oops", "application/json"],
    ["no model", JSON.stringify({ input: {} }), "application/json"],
    ["input not an object", JSON.stringify({ model: "m", input: "p" }), "application/json"],
  ])("answers 400 invalid_input for %s", async (_name, body, type) => {
    const res = await request(app).post("/v1/jobs").set("content-type", type).send(body);
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe("invalid_input");
  });

  it("answers 500, 400 and 422 for the submit faults", async () => {
    const submit = (prompt: string) => request(app).post("/v1/jobs").send({ model: "m", input: { prompt } });
    expect((await submit("[[up:submit_500]]")).status).toBe(500);
    expect((await submit("x [[up:reject]]")).body).toEqual({ error: { type: "invalid_input", message: expect.any(String) } });
    const policy = await submit("[[up:policy_input]]");
    expect([policy.status, policy.body.error.type]).toEqual([422, "content_policy"]);
  });

  it("reads directives from nested input strings too", async () => {
    const res = await request(app)
      .post("/v1/jobs")
      .send({ model: "m", input: { prompt: "ok", refs: [{ note: "[[up:reject]]" }] } });
    expect(res.status).toBe(400);
  });

  it("uses publicUrl for file URLs and serves the files it lists", async () => {
    const { body } = await request(app)
      .post("/v1/jobs")
      .send({ model: "sim-video-x", input: { prompt: "[[up:delay_ms=100]]", duration_seconds: 1 } });
    expect((await request(app).get(`/v1/jobs/${body.id}`)).body.status).toBe("running");
    expect((await request(app).get(`/files/${body.id}/0.mp4`)).status).toBe(404);
    time.advance(100);
    const job = await request(app).get(`/v1/jobs/${body.id}`);
    expect(job.body).toMatchObject({ status: "succeeded", output: { urls: [`http://sim.test/files/${body.id}/0.mp4`] } });
    const file = await request(app).get(`/files/${body.id}/0.mp4`).buffer(true);
    expect(file.status).toBe(200);
    expect(file.headers["content-type"]).toBe("video/mp4");
    expect((file.body as Buffer).toString("latin1", 4, 8)).toBe("ftyp");
    expect((await request(app).get(`/files/${body.id}/1.mp4`)).status).toBe(404);
    expect((await request(app).get(`/files/${body.id}/0.png`)).status).toBe(404);
  });

  it("keeps a finished job's outcome when canceled late", async () => {
    const { body } = await request(app)
      .post("/v1/jobs")
      .send({ model: "m", input: { prompt: "p" } });
    const res = await request(app).post(`/v1/jobs/${body.id}/cancel`);
    expect(res.body.status).toBe("succeeded");
  });

  it("answers 404 for unknown jobs and routes", async () => {
    expect((await request(app).get("/v1/jobs/upj_nope")).status).toBe(404);
    expect((await request(app).post("/v1/jobs/upj_nope/cancel")).status).toBe(404);
    expect((await request(app).get("/nowhere")).body.error.type).toBe("not_found");
    expect((await request(app).get("/healthz")).body).toEqual({ ok: true });
  });

  it("serves the same bytes for the same input", async () => {
    const submit = async () =>
      (
        await request(app)
          .post("/v1/jobs")
          .send({ model: "m", input: { prompt: "same", size: "256x256" } })
      ).body.id as string;
    const [a, b] = [await submit(), await submit()];
    const fileA = await request(app).get(`/files/${a}/0.png`).buffer(true);
    const fileB = await request(app).get(`/files/${b}/0.png`).buffer(true);
    expect(a).not.toBe(b);
    expect(Buffer.compare(fileA.body as Buffer, fileB.body as Buffer)).toBe(0);
  });

  it("plays a hostile upstream on request: foreign output URL, redirecting or mislabelled files", async () => {
    const submit = async (prompt: string) =>
      (
        await request(app)
          .post("/v1/jobs")
          .send({ model: "m", input: { prompt, size: "256x256" } })
      ).body.id as string;
    const foreign = await submit("[[up:output_url=http://meta.blocked.test/latest/meta-data/]]");
    expect((await request(app).get(`/v1/jobs/${foreign}`)).body.output).toEqual({ urls: ["http://meta.blocked.test/latest/meta-data/"] });
    const redirecting = await submit("[[up:redirect_file=http://meta.blocked.test/x]]");
    const hop = await request(app).get(`/files/${redirecting}/0.png`).redirects(0);
    expect([hop.status, hop.headers.location]).toEqual([302, "http://meta.blocked.test/x"]);
    const mislabelled = await request(app)
      .get(`/files/${await submit("[[up:mislabel]]")}/0.png`)
      .buffer(true);
    expect(mislabelled.headers["content-type"]).toBe("image/png");
    expect((mislabelled.body as Buffer).toString()).toContain("<script>");
    const retyped = await request(app)
      .get(`/files/${await submit("[[up:file_type=text/plain]]")}/0.png`)
      .buffer(true);
    expect(retyped.headers["content-type"]).toMatch(/^text\/plain/);
  });
});
