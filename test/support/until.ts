/**
 * Waits until `condition` holds, checking every 10 ms: tests wait for what they expect, never for a
 * fixed time (a shared, loaded machine). Throws naming `what` after `timeoutMs`.
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (${timeoutMs} ms)`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
