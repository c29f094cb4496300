import { MEDIA_ENDPOINTS, type Endpoint } from "@gen/domain";
import type { Storage } from "@gen/storage";

// An S3 backend answers each prefix with a listing and a delete (two requests per task), the local
// one with a directory removal on libuv's thread pool: 32 at a time keep a batch of thousands of
// tasks short without a burst of hundreds of requests (the AWS SDK's own socket limit is 50).
const CONCURRENCY = 32;

/** The storage prefix of a task's media (store-outputs writes `tasks/<id>/<n>.<ext>`). */
const taskMediaPrefix = (taskId: string) => `tasks/${taskId}/`;

/**
 * Removes the stored media of the tasks whose endpoint stores any (the others have none to look
 * for). Throws on the first storage failure: the caller then keeps the batch's rows, and the next
 * run tries again (a removed prefix is no error the second time).
 */
export async function removeTaskMedia(storage: Storage, tasks: ReadonlyArray<{ id: string; endpoint?: Endpoint }>): Promise<number> {
  const withMedia = tasks.filter((task) => task.endpoint === undefined || MEDIA_ENDPOINTS.includes(task.endpoint));
  for (let start = 0; start < withMedia.length; start += CONCURRENCY) {
    await Promise.all(withMedia.slice(start, start + CONCURRENCY).map((task) => storage.deletePrefix(taskMediaPrefix(task.id))));
  }
  return withMedia.length;
}
