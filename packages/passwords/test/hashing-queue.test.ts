import { setImmediate as turn } from "node:timers/promises";
import { HashingAbandoned, HashingBusy, HashingQueue } from "../src/hashing-queue.ts";

/** Work that finishes when the test says so, recording the order it started in. */
function gate() {
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const work = (name: string) => () =>
    new Promise<string>((resolve) => {
      started.push(name);
      finish.set(name, () => resolve(name));
    });
  return { started, work, finish: (name: string) => finish.get(name)!() };
}

describe("the hashing queue", () => {
  test("runs at most `slots` at once and one per client, and serves waiting clients in turn, not in arrival order", async () => {
    const queue = new HashingQueue({ slots: 2, maxRunningPerClient: 1, maxWaiting: 16, maxWaitingPerClient: 2 });
    const { started, work, finish } = gate();
    const done = [
      queue.run(work("flood-1"), { client: "flood" }),
      queue.run(work("flood-2"), { client: "flood" }),
      queue.run(work("flood-3"), { client: "flood" }),
    ];
    await turn();
    // One client never holds every slot: the second stays free for anyone else.
    expect(started).toEqual(["flood-1"]);
    expect(queue.stats()).toEqual({ started: 1, running: 1, waiting: 2 });
    done.push(queue.run(work("operator"), { client: "operator" }));
    await turn();
    expect(started).toEqual(["flood-1", "operator"]);
    // Both slots busy: the next two wait, and turns go by client rather than arrival.
    done.push(queue.run(work("late-1"), { client: "late" }), queue.run(work("late-2"), { client: "late" }));
    finish("operator");
    await turn();
    expect(started).toEqual(["flood-1", "operator", "late-1"]);
    finish("flood-1");
    await turn();
    expect(started).toEqual(["flood-1", "operator", "late-1", "flood-2"]);
    finish("late-1");
    await turn();
    expect(started.at(-1)).toBe("late-2");
    finish("flood-2");
    await turn();
    finish("late-2");
    finish("flood-3");
    expect(await Promise.all(done)).toEqual(["flood-1", "flood-2", "flood-3", "operator", "late-1", "late-2"]);
    expect(queue.stats()).toEqual({ started: 6, running: 0, waiting: 0 });
  });

  test("is bounded per client and in all: past the bound a hash is refused at once with a retry time", async () => {
    const queue = new HashingQueue({ slots: 1, maxRunningPerClient: 1, maxWaiting: 3, maxWaitingPerClient: 2 });
    const { work, finish } = gate();
    const first = queue.run(work("a-1"), { client: "a" });
    const waiting = [queue.run(work("a-2"), { client: "a" }), queue.run(work("a-3"), { client: "a" })];
    const refused = queue.run(work("a-4"), { client: "a" });
    await expect(refused).rejects.toBeInstanceOf(HashingBusy);
    await expect(refused).rejects.toMatchObject({ retryAfterSeconds: expect.any(Number) });
    // Another client still gets in line, until the whole queue is full.
    const other = queue.run(work("b-1"), { client: "b" });
    await expect(queue.run(work("c-1"), { client: "c" })).rejects.toBeInstanceOf(HashingBusy);
    for (const name of ["a-1", "a-2", "b-1", "a-3"]) {
      await turn();
      finish(name);
    }
    await Promise.all([first, ...waiting, other]);
    expect(queue.stats()).toEqual({ started: 4, running: 0, waiting: 0 });
  });

  test("a waiter whose signal fires leaves the line and costs no work; an aborted signal never starts", async () => {
    const queue = new HashingQueue({ slots: 1, maxRunningPerClient: 1, maxWaiting: 16, maxWaitingPerClient: 16 });
    const { started, work, finish } = gate();
    const first = queue.run(work("first"), { client: "a" });
    const gone = new AbortController();
    const abandoned = queue.run(work("gone"), { client: "b", signal: gone.signal });
    const kept = queue.run(work("kept"), { client: "c" });
    gone.abort();
    await expect(abandoned).rejects.toBeInstanceOf(HashingAbandoned);
    expect(queue.stats().waiting).toBe(1);
    await expect(queue.run(work("never"), { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(HashingAbandoned);
    finish("first");
    await turn();
    finish("kept");
    await Promise.all([first, kept]);
    expect(started).toEqual(["first", "kept"]);
    expect(queue.stats()).toEqual({ started: 2, running: 0, waiting: 0 });
  });
});
