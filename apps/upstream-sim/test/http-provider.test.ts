import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WorkflowError } from "@gen/errors";
import {
  PolicyViolation,
  ProviderUnavailableError,
  UpstreamRejection,
  createHttpProvider,
  hasOutput,
  type Provider,
  type ProviderJob,
  type ProviderResult,
} from "@gen/providers";
import { createUpstreamSim } from "../src/index.ts";

// The HTTP provider against the real upstream simulator on loopback: every mapping of the
// protocol to a workflow code, end to end.
let server: Server;
let base: string;
let provider: Provider;

beforeAll(async () => {
  server = createUpstreamSim().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = createHttpProvider({ baseUrl: base, timeoutMs: 5000 });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function job(prompt: string, extra: Record<string, unknown> = {}, model = "upstream-image-1"): ProviderJob {
  return { taskId: "task_00000000000000000000000000000002", endpoint: "images", model, params: { prompt, ...extra } };
}

async function settle(upstreamId: string, limitMs = 5000): Promise<ProviderResult> {
  const started = Date.now();
  for (;;) {
    const result = await provider.poll(upstreamId);
    if (result.state !== "running" || Date.now() - started > limitMs) return result;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function submitError(j: ProviderJob): Promise<unknown> {
  return provider.submit(j).then(
    () => new Error("submit resolved"),
    (error: unknown) => error,
  );
}

describe("HTTP provider ↔ upstream simulator", () => {
  it("completes with URLs of real PNG files served by the simulator, and token usage", async () => {
    const { upstreamId } = await provider.submit(job("a harbour at night", { n: 2, size: "512x512" }));
    const result = await settle(upstreamId);
    if (result.state !== "completed") throw new Error(JSON.stringify(result));
    expect(result.urls).toHaveLength(2);
    expect(result.tokens).toEqual({ input: 5, output: 2 * 256 });
    expect(hasOutput("images", result)).toBe(true);
    for (const url of result.urls ?? []) {
      expect(url.startsWith(`${base}/files/`)).toBe(true);
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("image/png");
      const png = Buffer.from(await response.arrayBuffer());
      expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([512, 512]);
    }
  });

  it("returns data for a text model", async () => {
    const { upstreamId } = await provider.submit({ ...job("Why tides happen", { max_words: 60 }, "upstream-essay-1"), endpoint: "essay" });
    const result = await settle(upstreamId);
    expect(result).toMatchObject({ state: "completed", data: { word_count: expect.any(Number), text: expect.stringContaining("tides") } });
  });

  it("unavailable: submit answered 500 (the worker retries it, then 80001), with the request id", async () => {
    const error = await submitError(job("[[up:submit_500]]"));
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect(error).toMatchObject({ upstream: { status: 500, message: "Simulated upstream outage", requestId: expect.stringMatching(/^req_/) } });
  });

  it("a quota: 429 with Retry-After for the first N submits of a task, then the job is taken", async () => {
    const quota = { ...job("[[up:submit_429=2]]"), taskId: "task_00000000000000000000000000000429" };
    for (let i = 0; i < 2; i++) {
      const error = await submitError(quota);
      expect(error).toBeInstanceOf(ProviderUnavailableError);
      expect(error).toMatchObject({ retryAfterMs: 1000, upstream: { status: 429 } });
    }
    await expect(provider.submit(quota)).resolves.toMatchObject({ upstreamId: expect.any(String) });
  });

  it("unavailable: nothing listening on the port", async () => {
    const probe = createUpstreamSim().listen(0, "127.0.0.1");
    await new Promise((resolve) => probe.once("listening", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const closed = createHttpProvider({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2000 });
    await expect(closed.submit(job("x"))).rejects.toMatchObject({ name: "ProviderUnavailableError", upstream: { code: "ECONNREFUSED" } });
  });

  it("80007: input rejected", async () => {
    const error = await submitError(job("[[up:reject]]"));
    expect(error).toBeInstanceOf(UpstreamRejection);
    expect(error).toBeInstanceOf(WorkflowError);
    expect(error).not.toBeInstanceOf(PolicyViolation);
    expect(error).toMatchObject({ code: 80007, upstream: { status: 400, message: "The input was rejected" } });
  });

  it("80006 at the input stage: policy verdict at submit", async () => {
    const error = await submitError(job("[[up:policy_input]]"));
    expect(error).toBeInstanceOf(PolicyViolation);
    expect(error).toMatchObject({ code: 80006, stage: "input" });
  });

  it("80006 at the output stage: policy verdict after generation", async () => {
    const { upstreamId } = await provider.submit(job("[[up:policy_output]]"));
    expect(await settle(upstreamId)).toMatchObject({ state: "failed", code: 80006, stage: "output" });
  });

  it("80003: terminal upstream failure", async () => {
    const { upstreamId } = await provider.submit(job("[[up:fail]]"));
    expect(await settle(upstreamId)).toMatchObject({ state: "failed", code: 80003, message: "Simulated upstream failure" });
  });

  it("80004: succeeded without URLs", async () => {
    const { upstreamId } = await provider.submit(job("[[up:no_urls]]"));
    const result = await settle(upstreamId);
    expect(result).toEqual({ state: "completed", urls: [] });
    if (result.state === "completed") expect(hasOutput("images", result)).toBe(false);
  });

  it("hang stays running; delay_ms runs then completes", async () => {
    const hung = await provider.submit(job("[[up:hang]]"));
    const delayed = await provider.submit(job("[[up:delay_ms=150]]"));
    expect(await provider.poll(delayed.upstreamId)).toEqual({ state: "running" });
    expect((await settle(delayed.upstreamId)).state).toBe("completed");
    expect(await provider.poll(hung.upstreamId)).toEqual({ state: "running" });
  });

  it("bad_file: the output URL fails to download (404, or 500 on request)", async () => {
    for (const [directive, status] of [
      ["[[up:bad_file]]", 404],
      ["[[up:bad_file=500]]", 500],
    ] as const) {
      const { upstreamId } = await provider.submit(job(directive));
      const result = await settle(upstreamId);
      if (result.state !== "completed") throw new Error(JSON.stringify(result));
      expect(result.urls).toHaveLength(1);
      expect((await fetch(result.urls?.[0] ?? "")).status).toBe(status);
    }
  });

  it("cancel stops a running job (idempotently); a later poll is a failure", async () => {
    const { upstreamId } = await provider.submit(job("[[up:hang]]"));
    await provider.cancel(upstreamId);
    await provider.cancel(upstreamId);
    const raw = (await (await fetch(`${base}/v1/jobs/${upstreamId}`)).json()) as { status: string };
    expect(raw.status).toBe("canceled");
    expect(await provider.poll(upstreamId)).toMatchObject({ state: "failed", code: 80003 });
    await expect(provider.cancel("upj_unknown")).resolves.toBeUndefined();
  });

  it("an unknown job id polls as 80003", async () => {
    expect(await provider.poll("upj_000000000000000000000000")).toMatchObject({ state: "failed", code: 80003 });
  });
});
