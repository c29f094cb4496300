import { runAt } from "../src/run-at.ts";

describe("runAt", () => {
  it("runs the task only once the given clock reads the time, even when a timer fires before that clock gets there", async () => {
    // A clock at half the timers' speed: every timer fires while it still reads early.
    const start = Date.now();
    const lagging = () => start + (Date.now() - start) / 2;
    const at = lagging() + 30;
    const ranAt = await new Promise<number>((resolve) => runAt(at, lagging, () => resolve(lagging())));
    expect(ranAt).toBeGreaterThanOrEqual(at);
  });

  it("runs a task whose time has come at once", () => {
    let ran = false;
    runAt(Date.now() - 1, Date.now, () => (ran = true));
    expect(ran).toBe(true);
  });
});
