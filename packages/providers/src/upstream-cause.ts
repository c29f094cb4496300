/**
 * What a provider said when it refused or failed a job: kept on the task for the operator (the
 * console, the logs), never shown to the client, whose error is the workflow code's own message.
 */
export interface UpstreamCause {
  /** HTTP status of the provider's answer; absent for a network error. */
  status?: number;
  /** The provider's error text (or the network error's), at most 500 characters. */
  message?: string;
  /** The provider's request id (`x-request-id` and the like), to quote to its support. */
  requestId?: string;
  /** A network error's code (ECONNREFUSED, ETIMEDOUT, ...); absent when the provider answered. */
  code?: string;
}

const MAX_MESSAGE_LENGTH = 500;

/** Keeps a provider's error text to a size fit for a task row and a log line. */
export function causeMessage(text: unknown): string | undefined {
  if (typeof text !== "string" || text === "") return undefined;
  return text.length > MAX_MESSAGE_LENGTH ? text.slice(0, MAX_MESSAGE_LENGTH) : text;
}

/** What a provider's answer said, for the operator: its status, its error text (kept to size), its request id; what is missing is left out. */
export function answerCause(status: number | undefined, text: unknown, requestId: string | null | undefined): UpstreamCause {
  const cause: UpstreamCause = {};
  if (status !== undefined) cause.status = status;
  const message = causeMessage(text);
  if (message !== undefined) cause.message = message;
  if (requestId) cause.requestId = requestId;
  return cause;
}
