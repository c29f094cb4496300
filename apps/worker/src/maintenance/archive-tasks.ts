import { readTaskRecords, type ExpiredTask, type Queryable } from "@gen/db";
import { ARCHIVE_ROOT, type Storage } from "@gen/storage";

/**
 * Writes the tasks about to be removed to the storage backend, as JSON lines (a task with its
 * delivery, attempts and ledger entries per line), one file per day the tasks finished:
 * `archive/tasks/<YYYY-MM-DD>/<run>-<first task id>.jsonl`. The run's start time in the name makes
 * every file new, so a file is never overwritten; a batch written but not removed (a failure in
 * between) is written again by a later run, so a task can appear in two files: the lines are the
 * same, and the task id tells them apart. Throws on any failure, before anything is removed.
 */
export async function archiveTasks(db: Queryable, storage: Storage, tasks: readonly ExpiredTask[], runStartedAt: Date): Promise<string[]> {
  const dayOf = new Map(tasks.map((task) => [task.id, task.finishedAt.toISOString().slice(0, 10)]));
  const byDay = new Map<string, string[]>();
  for (const { id, record } of await readTaskRecords(db, [...dayOf.keys()])) {
    const day = dayOf.get(id)!;
    const lines = byDay.get(day) ?? [];
    if (lines.length === 0) byDay.set(day, lines);
    lines.push(record);
  }
  const run = runStartedAt.toISOString().replace(/[-:.]/g, "");
  const keys: string[] = [];
  for (const [day, lines] of byDay) {
    const first = JSON.parse(lines[0]!) as { id: string };
    const key = `${ARCHIVE_ROOT}/tasks/${day}/${run}-${first.id}.jsonl`;
    await storage.putArchive(key, Buffer.from(`${lines.join("\n")}\n`));
    keys.push(key);
  }
  return keys;
}
