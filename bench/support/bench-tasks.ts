import type { Database } from "@gen/db";
import { newTaskId } from "@gen/ids";
import { insertRows } from "../../test/support/db-rows.ts";

const CHUNK = 5_000;

/** `count` tasks of one user, still running with a `pending` webhook delivery, inserted in bulk; given several URLs, task i goes to `urls[i % urls.length]`. */
export async function createRunningTasks(db: Database, userId: string, urls: string | string[], count: number): Promise<string[]> {
  const list = typeof urls === "string" ? [urls] : urls;
  const ids = Array.from({ length: count }, () => newTaskId());
  const urlOf = (index: number) => list[index % list.length]!;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    await insertRows(
      db,
      "tasks",
      chunk.map((id, n) => ({
        id,
        userId,
        endpoint: "images",
        model: "sim-image-1",
        status: "in_progress",
        input: { prompt: "bench" },
        webhookUrl: urlOf(i + n),
        requestId: "req_000000000000000000000000",
        billingMethod: "flat",
        reservedCredits: 4,
      })),
    );
    await insertRows(
      db,
      "webhook_deliveries",
      chunk.map((taskId, n) => ({ taskId, url: urlOf(i + n), status: "pending" })),
    );
  }
  return ids;
}

/** What settlement writes for a completed task (the ledger is not the subject here). */
export async function completeTasks(db: Database, ids: string[], finishedAt = new Date()): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    // One hand-written statement per chunk: the dispatch figure makes 500 of these a second from
    // the runner, on the machine under test.
    await db.$sql.query(
      `UPDATE tasks SET status = 'completed', finished_at = $1, charged_credits = 4, output = jsonb_build_object('image_urls', jsonb_build_array('https://cdn.bench.example/' || id || '/0.png')) WHERE id = ANY($2)`,
      [finishedAt, chunk],
    );
  }
}
