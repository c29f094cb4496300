import { callbackToken } from "@gen/ids";
import { detectModel, startUpstreamFlow, until, type UpstreamFlow } from "./support/upstream-flow.ts";

// Callbacks end to end: the worker gives the provider an address on the gateway, the provider calls
// it when its job is done, and the task's parked job polls at once instead of at its 30-s safety poll.
const SECRET = "callback-secret-for-flow-tests-0123456789";
let flow: UpstreamFlow;

beforeAll(async () => {
  // The gateway's own loopback address is the public base the providers call.
  flow = await startUpstreamFlow([detectModel("hooked-detect"), detectModel("slow-detect", { expectedDurationMs: 60_000 })], (baseUrl) => ({
    UPSTREAM_CALLBACK_URL: baseUrl,
    UPSTREAM_CALLBACK_SECRET: SECRET,
  }));
  flow.upstream.takesCallbacks = true;
  flow.startWorker();
});
afterAll(() => flow.close());

const jobOf = (taskId: string) => flow.upstream.submits.find((job) => job.taskId === taskId);
const parked = async (taskId: string) => (await flow.gateway.deps.generationQueue.getJobState(taskId)) === "delayed";
const call = (url: string, body = '{"status":"succeeded"}') => fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body });

test("the job gets the task's callback address; the callback makes the next poll run now, and only one", async () => {
  const id = await flow.submit("hooked-detect", "hello");
  const job = await until(() => jobOf(id), "submitted");
  expect(job.callbackUrl).toBe(`${flow.baseUrl}/upstream-callbacks/${callbackToken(SECRET, id)}`);
  await until(() => parked(id), "parked");
  // With a callback expected the submit's step does not poll, and the next poll is the 30-s safety net.
  expect(flow.upstream.pollsOf(id)).toBe(0);
  expect(await flow.status(id)).toMatchObject({ status: "in_progress", upstreamCallback: true });
  const delay = (await flow.gateway.deps.generationQueue.getJob(id))!.delay;
  expect(delay).toBeGreaterThanOrEqual(29_000);
  flow.upstream.finish(id);
  expect((await call(job.callbackUrl!)).status).toBe(204);
  await until(async () => (await flow.status(id)).status === "completed", "completed after the callback", 10_000);
  expect(flow.upstream.pollsOf(id)).toBe(1);
  // Replayed after the end: answered the same, and nothing polls.
  expect((await call(job.callbackUrl!)).status).toBe(204);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(flow.upstream.pollsOf(id)).toBe(1);
}, 30_000);

test("a forged callback is refused and a replayed one costs one poll: the task waits for its real end", async () => {
  const id = await flow.submit("hooked-detect", "forged");
  const job = await until(() => jobOf(id), "submitted");
  await until(() => parked(id), "parked");
  const forged = `${flow.baseUrl}/upstream-callbacks/${callbackToken("not-the-secret-but-long-enough-0123", id)}`;
  expect((await call(forged)).status).toBe(404);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(flow.upstream.pollsOf(id)).toBe(0);
  // A replay of the real address while the job still runs: one poll, then parked again for the safety net.
  expect((await call(job.callbackUrl!)).status).toBe(204);
  await until(() => flow.upstream.pollsOf(id) === 1, "one poll");
  await until(() => parked(id), "parked again");
  expect(await flow.status(id)).toMatchObject({ status: "in_progress" });
  expect(flow.upstream.pollsOf(id)).toBe(1);
  flow.upstream.finish(id);
  await call(job.callbackUrl!);
  await until(async () => (await flow.status(id)).status === "completed", "completed");
}, 30_000);

test("a job that ends during its submit's step calls back before the job is parked: the mark wakes it after the park", async () => {
  flow.upstream.onSubmit = async (job, upstreamId) => {
    if (!String(job.params.text).includes("instant")) return;
    flow.upstream.finish(job.taskId);
    expect(upstreamId).toBe(`up_${job.taskId}`);
    expect((await call(job.callbackUrl!)).status).toBe(204);
  };
  try {
    const id = await flow.submit("hooked-detect", "instant");
    await until(async () => (await flow.status(id)).status === "completed", "completed without waiting for the safety poll", 10_000);
    expect(flow.upstream.pollsOf(id)).toBe(1);
  } finally {
    flow.upstream.onSubmit = async () => {};
  }
}, 30_000);

test("a provider that did not take the address is polled as before, and the task says so", async () => {
  flow.upstream.takesCallbacks = false;
  try {
    const id = await flow.submit("hooked-detect", "no webhook option");
    await until(() => jobOf(id), "submitted");
    await until(() => flow.upstream.pollsOf(id) >= 2, "polled by the schedule");
    expect(await flow.status(id)).toMatchObject({ upstreamCallback: false });
    flow.upstream.finish(id);
    await until(async () => (await flow.status(id)).status === "completed", "completed");
  } finally {
    flow.upstream.takesCallbacks = true;
  }
}, 30_000);

test("without callbacks, a model's expectedDurationMs puts the first poll at the expected end", async () => {
  flow.upstream.takesCallbacks = false;
  try {
    const id = await flow.submit("slow-detect", "expected");
    await until(() => jobOf(id), "submitted");
    await until(() => parked(id), "parked");
    // The submit's step polled once; the next poll is a minute after the start.
    expect(flow.upstream.pollsOf(id)).toBe(1);
    const job = (await flow.gateway.deps.generationQueue.getJob(id))!;
    expect(job.delay).toBeGreaterThan(55_000);
    await fetch(`${flow.baseUrl}/api/v1/tasks/${id}/cancel`, { method: "POST", headers: { Authorization: flow.user.auth } });
    await until(() => flow.upstream.canceled.includes(`up_${id}`), "cancelled upstream at once");
  } finally {
    flow.upstream.takesCallbacks = true;
  }
}, 30_000);
