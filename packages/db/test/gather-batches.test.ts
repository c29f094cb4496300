import { gatherBatches } from "../src/gather-batches.ts";

// Which items travel together; no timing is asserted (the 2 ms bound is set far out of reach here).
const turn = () => new Promise((resolve) => setImmediate(resolve));

function harness(maxSize: number, maxInFlight: number) {
  const batches: number[][] = [];
  const finish: (() => void)[] = [];
  const push = gatherBatches<number>({ maxSize, maxInFlight, maxWaitMs: 60_000 }, (items) => {
    batches.push(items);
    return new Promise<void>((resolve) => finish.push(resolve));
  });
  return { batches, finish, push };
}

test("items pushed in one turn go together, capped at maxSize, in arrival order", async () => {
  const { batches, finish, push } = harness(4, 10);
  for (let i = 0; i < 10; i++) push(i);
  await turn();
  expect(batches).toEqual([
    [0, 1, 2, 3],
    [4, 5, 6, 7],
    [8, 9],
  ]);
  finish.forEach((done) => done());
});

test("while maxInFlight batches are written, new items gather and go when one finishes", async () => {
  const { batches, finish, push } = harness(32, 1);
  push(1);
  await turn();
  push(2);
  await turn();
  push(3);
  await turn();
  expect(batches).toEqual([[1]]);
  finish[0]!();
  await turn();
  expect(batches).toEqual([[1], [2, 3]]);
  finish[1]!();
  await turn();
  push(4);
  await turn();
  expect(batches).toEqual([[1], [2, 3], [4]]);
  finish[2]!();
});

test("unbounded in flight (the rate limiter's takes), each turn's items go at its end without waiting for earlier batches", async () => {
  const { batches, finish, push } = harness(3, Number.POSITIVE_INFINITY);
  push(1);
  push(2);
  await turn();
  push(3);
  await turn();
  push(4);
  push(5);
  push(6);
  push(7);
  await turn();
  expect(batches).toEqual([[1, 2], [3], [4, 5, 6], [7]]);
  finish.forEach((done) => done());
});
