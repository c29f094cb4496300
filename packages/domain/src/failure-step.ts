/**
 * The step of a task's generation in which it failed, kept in its operator-side cause
 * (tasks.failure_cause `step`): the console and the worker's log name it, the API never does.
 */
export const FailureStep = {
  /** The task's model is no longer in the catalog. */
  Catalog: "catalog",
  /** Creating the upstream job (every route unavailable, or the input refused). */
  Submit: "submit",
  /** The upstream job ran and reported a failure, or a poll was refused. */
  Poll: "poll",
  /** The generation cap (GENERATION_TIMEOUT_MS) was reached. */
  Deadline: "deadline",
  /** Fetching an output file from the upstream's URL. */
  Download: "download",
  /** Writing an output file to the storage backend. */
  Store: "store",
} as const;

export type FailureStep = (typeof FailureStep)[keyof typeof FailureStep];
