import { MEDIA_ENDPOINTS, type Endpoint } from "@gen/domain";
import type { Wf } from "@gen/errors";

export interface ProviderJob {
  taskId: string;
  endpoint: Endpoint;
  model: string;
  /** Name the upstream knows the model by (catalog `upstreamModel`); `model` when absent. */
  upstreamModel?: string;
  /** The validated request body minus `webhook_url`; the text is in `prompt`, `text` or `input`. */
  params: Record<string, unknown>;
  /** Extra time the simulated provider takes (catalog `simulatedDelayMs`); the HTTP provider ignores it. */
  delayMs?: number;
}

export type ProviderFile = { contentType: string; extension: string; data: Buffer };

export type ProviderResult =
  | { state: "running" }
  | {
      state: "completed";
      files?: ProviderFile[];
      urls?: string[];
      data?: Record<string, unknown>;
      tokens?: { input: number; output: number };
    }
  | {
      state: "failed";
      code: typeof Wf.UpstreamFailed | typeof Wf.ContentPolicy | typeof Wf.InputRejected | typeof Wf.Canceled;
      stage?: "input" | "output";
      message?: string;
    };

export type CompletedResult = Extract<ProviderResult, { state: "completed" }>;

export interface Provider {
  /**
   * Starts the upstream job. Throws WorkflowError(80001) on a 5xx/network error, WorkflowError(80007)
   * when the input is rejected, PolicyViolation (a WorkflowError with code 80006 and stage "input")
   * for a policy verdict at submit.
   */
  submit(job: ProviderJob, signal?: AbortSignal): Promise<{ upstreamId: string }>;
  /**
   * Resolves with the upstream's answer. Rejects only when there was no answer (network error,
   * timeout, 5xx): ProviderUnavailableError, which is transient, so poll again later.
   */
  poll(upstreamId: string, signal?: AbortSignal): Promise<ProviderResult>;
  /** Best effort and idempotent: never rejects. */
  cancel(upstreamId: string): Promise<void>;
}

/**
 * Whether a completed result carries the output its endpoint needs: files or URLs for a media
 * endpoint, `data` for the others. A completed result without it is the worker's 80004.
 */
export function hasOutput(endpoint: Endpoint, result: CompletedResult): boolean {
  if (MEDIA_ENDPOINTS.includes(endpoint)) return (result.files?.length ?? 0) + (result.urls?.length ?? 0) > 0;
  return result.data !== undefined;
}
