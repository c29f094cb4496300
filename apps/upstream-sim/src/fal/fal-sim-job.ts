import type { Endpoint } from "@gen/domain";
import { FalQueueStatus } from "@gen/providers";
import type { UpDirectives } from "../up-directives.ts";

export interface FalSimJob {
  id: string;
  model: string;
  endpoint: Endpoint;
  input: Record<string, unknown>;
  createdAt: number;
  /** Time the job takes, queued for its first half and in progress for the second. */
  durationMs: number;
  directives: UpDirectives;
  webhookUrl?: string;
  canceled: boolean;
  /** Status polls answered so far (`[[up:poll_500=N]]` fails the first N). */
  polls: number;
}

export function isFinished(job: FalSimJob, now: number): boolean {
  return job.canceled || (!job.directives.hang && now >= job.createdAt + job.durationMs);
}

export function queueStatusOf(job: FalSimJob, now: number): FalQueueStatus {
  if (isFinished(job, now)) return FalQueueStatus.Completed;
  return now < job.createdAt + job.durationMs / 2 ? FalQueueStatus.InQueue : FalQueueStatus.InProgress;
}
