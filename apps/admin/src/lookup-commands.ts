import { findTask, findTasksByRequestId, listApiKeys, readCredits, type Database, type Task } from "@gen/db";
import { TASK_ID_PATTERN } from "@gen/ids";
import { UsageError } from "./parse-args.ts";

const USER_ID = /^[A-Za-z0-9_-]{1,64}$/;
const REQUEST_ID = /^req_[0-9a-f]{24}$/;

/** A user's balance and keys (ids only: keys are never stored). */
export async function showUser(db: Database, userId: string | undefined) {
  if (!userId || !USER_ID.test(userId)) throw new UsageError("--user must be 1-64 characters of [A-Za-z0-9_-]");
  const credits = await readCredits(db, userId);
  if (credits === undefined) throw new UsageError(`no such user: ${userId}`);
  const keys = await listApiKeys(db, userId);
  return {
    user_id: userId,
    credits,
    keys: keys.map((k) => ({ key_id: k.id, created_at: k.createdAt.toISOString(), revoked_at: k.revokedAt?.toISOString() ?? null })),
  };
}

/**
 * A task by its id (`--task`) or the request id a client quotes (`--request`), with what operators
 * see and clients never do: its owner, its upstream job and the failure's cause.
 */
export async function findTaskCommand(db: Database, flags: { task?: string | undefined; request?: string | undefined }) {
  const { task, request } = flags;
  if ((task === undefined) === (request === undefined)) throw new UsageError("find-task needs one of --task <task_id> or --request <request_id>");
  let tasks: Task[];
  if (task !== undefined) {
    if (!TASK_ID_PATTERN.test(task)) throw new UsageError("--task must look like task_<32 hex characters>");
    const found = await findTask(db, task);
    tasks = found ? [found] : [];
  } else {
    if (!REQUEST_ID.test(request!)) throw new UsageError("--request must look like req_<24 hex characters>");
    tasks = await findTasksByRequestId(db, request!);
  }
  if (tasks.length === 0) throw new UsageError(`no task found for ${task ?? request}`);
  return { tasks: tasks.map(operatorView) };
}

function operatorView(task: Task) {
  return {
    id: task.id,
    user_id: task.userId,
    request_id: task.requestId,
    endpoint: task.endpoint,
    model: task.model,
    status: task.status,
    discarded: task.discardedAt !== null,
    error_code: task.errorCode,
    created_at: task.createdAt.toISOString(),
    started_at: task.startedAt?.toISOString() ?? null,
    finished_at: task.finishedAt?.toISOString() ?? null,
    upstream: task.upstreamId === null ? null : { provider: task.upstreamProvider, model: task.upstreamModel, id: task.upstreamId },
    failure_cause: task.failureCause,
  };
}
