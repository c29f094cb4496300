import { TASK_ID_PATTERN, newRequestId, newTaskId } from "../src/index.ts";

// Ids come from a pool of random bytes refilled 4 KiB at a time: across many refills every id
// keeps its documented shape and none repeats.
test("ids keep their shape and never repeat across pool refills", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2_000; i++) {
    const task = newTaskId();
    const request = newRequestId();
    expect(task).toMatch(TASK_ID_PATTERN);
    expect(request).toMatch(/^req_[0-9a-f]{24}$/);
    seen.add(task).add(request);
  }
  expect(seen.size).toBe(4_000);
});
