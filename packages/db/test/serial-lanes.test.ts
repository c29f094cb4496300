import { serialLanes } from "../src/serial-lanes.ts";

// Which items travel together and which wait: one batch at a time per key, a cap on keys at once.
const turn = () => new Promise((resolve) => setImmediate(resolve));

function harness(maxSize: number, maxLanes: number) {
  const batches: string[][] = [];
  const finish = new Map<string, () => void>();
  const push = serialLanes<string>(
    { maxSize, maxLanes },
    (item) => item[0]!,
    (items) => {
      batches.push(items);
      return new Promise<void>((resolve) => finish.set(items[0]!, resolve));
    },
  );
  const done = async (first: string) => {
    finish.get(first)!();
    await turn();
  };
  return { batches, push, done };
}

test("one batch at a time per key: what queues meanwhile goes next, together, in arrival order", async () => {
  const { batches, push, done } = harness(32, 4);
  push(["a1", "b1", "a2"]);
  push(["a3"]);
  push(["b2"]);
  expect(batches).toEqual([["a1", "a2"], ["b1"]]);
  await done("b1");
  expect(batches).toEqual([["a1", "a2"], ["b1"], ["b2"]]);
  await done("a1");
  expect(batches.at(-1)).toEqual(["a3"]);
  await done("a3");
  await done("b2");
  push(["a4"]);
  expect(batches.at(-1)).toEqual(["a4"]);
  await done("a4");
});

test("at most maxLanes keys at once, the others in the order they queued; a key's queue longer than maxSize goes in several batches", async () => {
  const { batches, push, done } = harness(2, 2);
  push(["a1", "b1", "c1", "a2", "a3", "d1"]);
  expect(batches).toEqual([["a1", "a2"], ["b1"]]);
  await done("b1");
  // "a" is still running, so the next key in line is "c".
  expect(batches.at(-1)).toEqual(["c1"]);
  await done("a1");
  expect(batches.at(-1)).toEqual(["a3"]);
  await done("c1");
  expect(batches.at(-1)).toEqual(["d1"]);
  await done("a3");
  await done("d1");
  expect(batches).toHaveLength(5);
});
