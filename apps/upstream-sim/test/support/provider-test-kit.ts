import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ProviderUnavailableError, type Provider, type ProviderJob, type ProviderResult } from "@gen/providers";

/** What the adapter tests against the simulators share: a server on loopback, polling to the end, a rejection as a value. */
export async function listen(app: { listen(port: number, host: string): Server }): Promise<{ server: Server; url: string }> {
  const listening = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => listening.once("listening", resolve));
  return { server: listening, url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}` };
}

export async function close(closing: Server): Promise<void> {
  closing.closeAllConnections();
  await new Promise((resolve) => closing.close(resolve));
}

/** Polls until the job is no longer running, or `limitMs` passed: its last answer. */
export async function settleOn(provider: Provider, upstreamId: string, limitMs = 5000): Promise<ProviderResult> {
  const started = Date.now();
  for (;;) {
    const result = await provider.poll(upstreamId);
    if (result.state !== "running" || Date.now() - started > limitMs) return result;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The error a promise rejects with (an Error "resolved" when it did not). */
export function failure<T>(promise: Promise<T>): Promise<unknown> {
  return promise.then(
    () => new Error("resolved"),
    (error: unknown) => error,
  );
}

export interface BoundedAnswerSubject {
  provider: () => Provider;
  /** The same adapter with a 500-ms time limit and a cap too large to reach. */
  quick: () => Provider;
  job: (prompt: string) => ProviderJob;
}

/** A huge answer stops at the cap and an endless one at the time limit, both transient; a caller's abort is its own reason. */
export function boundedAnswerTests(subject: BoundedAnswerSubject): void {
  it("a huge answer is capped at submit and at poll, transient", async () => {
    const provider = subject.provider();
    expect(await failure(provider.submit(subject.job("[[up:huge_submit]]")))).toMatchObject({
      name: "ProviderUnavailableError",
      message: expect.stringContaining("bytes"),
    });
    const { upstreamId } = await provider.submit(subject.job("[[up:huge_poll]]"));
    expect(await failure(provider.poll(upstreamId))).toMatchObject({ name: "ProviderUnavailableError", message: expect.stringContaining("bytes") });
  });

  it("an endless poll answer ends at the time limit, transient", async () => {
    const quick = subject.quick();
    const { upstreamId } = await quick.submit(subject.job("[[up:endless_poll]]"));
    expect(await failure(quick.poll(upstreamId))).toBeInstanceOf(ProviderUnavailableError);
  });

  it("a caller's abort rejects with its reason, not as an upstream fault", async () => {
    const controller = new AbortController();
    controller.abort(new Error("shutting down"));
    expect(await failure(subject.provider().submit(subject.job("x"), controller.signal))).toMatchObject({ message: "shutting down" });
  });
}
