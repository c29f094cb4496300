import { createUpstreamSlots } from "@gen/queues";
import { detectModel, startUpstreamFlow, until, type UpstreamFlow } from "./support/upstream-flow.ts";

// maxConcurrency across the fleet: two workers share one queue and one cap.
let flow: UpstreamFlow;

beforeAll(async () => {
  flow = await startUpstreamFlow([
    detectModel("capped-detect", { maxConcurrency: 2 }),
    detectModel("capped-pair", { maxConcurrency: 1, fallbacks: [{ provider: "http", upstreamModel: "pair-fallback", maxConcurrency: 1 }] }),
  ]);
  flow.startWorker();
  flow.startWorker();
});
afterAll(() => flow.close());

const submittedIds = () => flow.upstream.submits.map((job) => job.taskId);

test("at most maxConcurrency jobs run upstream; the rest stay queued, and get slots first come, first served as jobs finish", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push(await flow.submit("capped-detect", `text ${i}`));
  await until(() => flow.upstream.running().length === 2, "two jobs running");
  // The others wait queued: not started, so their generation cap is not running; their jobs parked.
  await until(async () => ((await flow.gateway.deps.generationQueue.getJobCounts("delayed")).delayed ?? 0) >= 6, "every job parked");
  const waiting = ids.filter((id) => !submittedIds().includes(id));
  expect(waiting).toHaveLength(4);
  for (const id of waiting) expect(await flow.status(id)).toMatchObject({ status: "queued", startedAt: null });
  // The first two submitted are the first two that came.
  expect(submittedIds()).toEqual(ids.slice(0, 2));
  let peak = 0;
  for (let done = 0; done < ids.length; done++) {
    const oldest = flow.upstream.running()[0]!;
    flow.upstream.finish(oldest);
    await until(async () => (await flow.status(oldest)).status === "completed", `task ${done} completed`);
    // The freed slot went to the next task in line, woken at once (not at its safety delay).
    const expected = Math.min(ids.length, done + 3);
    await until(() => flow.upstream.submits.length === expected, `submit ${expected}`);
    peak = Math.max(peak, flow.upstream.running().length);
  }
  expect(peak).toBeLessThanOrEqual(2);
  expect(submittedIds()).toEqual(ids);
}, 60_000);

test("a route at its cap sends the next task to the fallback; a third waits for whichever frees first", async () => {
  const first = await flow.submit("capped-pair", "a");
  await until(() => submittedIds().includes(first), "first submitted");
  const second = await flow.submit("capped-pair", "b");
  await until(() => submittedIds().includes(second), "second submitted");
  const third = await flow.submit("capped-pair", "c");
  const route = (id: string) => flow.upstream.submits.find((job) => job.taskId === id)?.upstreamModel;
  expect([route(first), route(second)]).toEqual(["capped-pair", "pair-fallback"]);
  await until(async () => (await flow.gateway.deps.generationQueue.getJobState(third)) === "delayed", "third parked");
  expect(await flow.status(third)).toMatchObject({ status: "queued" });
  flow.upstream.finish(second);
  await until(() => submittedIds().includes(third), "third submitted");
  expect(route(third)).toBe("pair-fallback");
  flow.upstream.finish(first);
  flow.upstream.finish(third);
  for (const id of [first, second, third]) await until(async () => (await flow.status(id)).status === "completed", "completed");
}, 30_000);

test("a cancel frees the slot at once: of a running task for the next in line, of a waiting one without blocking the line", async () => {
  const running = [await flow.submit("capped-detect", "r1"), await flow.submit("capped-detect", "r2")];
  await until(() => running.every((id) => submittedIds().includes(id)), "two running");
  const waiter = await flow.submit("capped-detect", "waiter");
  const next = await flow.submit("capped-detect", "next");
  await until(async () => (await flow.gateway.deps.generationQueue.getJobState(next)) === "delayed", "next parked");
  const cancel = (id: string) => fetch(`${flow.baseUrl}/api/v1/tasks/${id}/cancel`, { method: "POST", headers: { Authorization: flow.user.auth } });
  // The waiter leaves the line without ever running upstream.
  expect((await cancel(waiter)).status).toBe(200);
  // A running task's cancel: its upstream job is cancelled now, not at its next poll, and its slot goes to `next`.
  expect((await cancel(running[0]!)).status).toBe(200);
  await until(() => flow.upstream.canceled.includes(`up_${running[0]}`), "upstream job cancelled");
  await until(() => submittedIds().includes(next), "next submitted");
  expect(submittedIds()).not.toContain(waiter);
  expect(await flow.status(waiter)).toMatchObject({ status: "failed", errorCode: 80008, startedAt: null });
  flow.upstream.finish(running[1]!);
  flow.upstream.finish(next);
  for (const id of [running[1]!, next]) await until(async () => (await flow.status(id)).status === "completed", "completed");
}, 30_000);

test("a slot held by a task whose worker and job are gone is given back when its lease runs out", async () => {
  const slots = createUpstreamSlots(flow.gateway.deps.redis, flow.gateway.deps.config.queuePrefix);
  const routes = [
    { key: "http:capped-pair", cap: 1 },
    { key: "http:pair-fallback", cap: 1 },
  ];
  // Two tasks of a dead worker hold both routes for 300 ms, never renewed.
  await slots.claim("capped-pair", routes, 0, "task_lost_a", 300);
  await slots.claim("capped-pair", routes, 1, "task_lost_b", 300);
  await new Promise((resolve) => setTimeout(resolve, 350));
  const id = await flow.submit("capped-pair", "after a crash");
  await until(() => submittedIds().includes(id), "submitted into the given-back slot");
  flow.upstream.finish(id);
  await until(async () => (await flow.status(id)).status === "completed", "completed");
}, 30_000);
