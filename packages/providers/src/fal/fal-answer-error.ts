import { ApiError } from "@fal-ai/client";
import { answerCause, type UpstreamCause } from "../upstream-cause.ts";
import { falErrorText } from "./fal-fetch.ts";
import { FAL_CONTENT_POLICY_TYPE } from "./fal-vocabulary.ts";

/** What fal said in a 4xx answer, for the operator. */
export function causeOfApiError(error: ApiError<unknown>): UpstreamCause {
  return answerCause(error.status, falErrorText(error.body) ?? falErrorText(error.message), error.requestId);
}

/** A 422 whose `detail` names a content-policy violation (`[{ type: "content_policy_violation", loc, msg }]`). */
export function isContentPolicy(error: ApiError<unknown>): boolean {
  if (error.status !== 422 || error.body === null || typeof error.body !== "object") return false;
  const detail = (error.body as { detail?: unknown }).detail;
  return (
    Array.isArray(detail) &&
    detail.some((entry: unknown) => entry !== null && typeof entry === "object" && (entry as { type?: unknown }).type === FAL_CONTENT_POLICY_TYPE)
  );
}

/** Input fal refused as invalid. */
export function isInputRejection(error: ApiError<unknown>): boolean {
  return error.status === 400 || error.status === 413 || error.status === 415 || error.status === 422;
}

export function isApiError(error: unknown): error is ApiError<unknown> {
  return error instanceof ApiError;
}
