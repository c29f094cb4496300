import { ledgerHolds, startStack, type Stack } from "./stack.ts";

// A broken upstream (the simulator's directives) answers 700 MB, or never stops answering. The
// worker runs in this process: its RSS is what such an answer costs it. Before answers were capped,
// one 700 MB poll took a worker from 173 MB to 582 MB, again on every poll.
let stack: Stack;
let user: { userId: string; auth: string };

beforeAll(async () => {
  // The submit retry budget ends well before the cap: a refused submit answer fails 80001 and never
  // races the cap (80002) at the last retry.
  stack = await startStack({ GENERATION_TIMEOUT_MS: "3000", UPSTREAM_SUBMIT_RETRY_MS: "500" });
  stack.startWorker();
  user = await stack.user();
});
afterAll(() => stack.close());
afterEach(() => ledgerHolds(stack, user.userId));

const CASES: [name: string, directive: string, code: number][] = [
  ["a 700 MB submit answer fails the submission", "[[up:huge_submit]]", 80001],
  ["700 MB poll answers are failed polls until the time-out", "[[up:huge_poll]]", 80002],
  ["poll answers that never end are failed polls until the time-out", "[[up:endless_poll]]", 80002],
];

test.each(CASES)("%s (%s: %d), fully refunded, the worker's memory bounded", async (_name, directive, code) => {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  try {
    const submitted = await stack.submit(user.auth, "/api/v1/images/generations", { model: "upstream-image-1", prompt: `a boat ${directive}` });
    expect(submitted.status).toBe(202);
    const task = await stack.waitTerminal(user.auth, submitted.body.id);
    expect(task).toMatchObject({ status: "failed", output: null, usage: { credits: 0 }, error: { code } });
    expect(task.billing.refunded_credits).toBe(task.billing.reserved_credits);
  } finally {
    clearInterval(sampler);
  }
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  console.log(`${directive}: test process (gateway, worker, simulator) RSS ${mb(before)} before, peak ${mb(peak)}`);
  // Generous for a loaded machine; reading one answer whole would add at least 700 MB.
  expect(peak - before).toBeLessThan(250 * 1024 * 1024);
});
