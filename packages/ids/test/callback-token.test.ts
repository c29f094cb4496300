import { callbackToken, newTaskId, taskOfCallbackToken } from "../src/index.ts";

const SECRET = "s".repeat(32);

test("a token names its task under the secret it was made with, and only under it", () => {
  const taskId = newTaskId();
  const token = callbackToken(SECRET, taskId);
  expect(token).toMatch(/^task_[0-9a-f]{32}\.[A-Za-z0-9_-]{43}$/);
  expect(taskOfCallbackToken(SECRET, token)).toBe(taskId);
  expect(taskOfCallbackToken("t".repeat(32), token)).toBeUndefined();
});

test("a forged, altered or malformed token names no task", () => {
  const taskId = newTaskId();
  const token = callbackToken(SECRET, taskId);
  const other = newTaskId();
  const flipped = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
  for (const bad of [
    `${other}${token.slice(taskId.length)}`,
    flipped,
    token.slice(0, -1),
    `${token}A`,
    taskId,
    `${taskId}.`,
    "",
    ".",
    `${taskId}.${"é".repeat(43)}`,
    `task_x.${token.slice(taskId.length + 1)}`,
  ]) {
    expect(taskOfCallbackToken(SECRET, bad)).toBeUndefined();
  }
});
