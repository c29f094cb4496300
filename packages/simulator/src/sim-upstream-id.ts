import { deflateRawSync, inflateRawSync } from "node:zlib";
import { isEndpoint, type Endpoint } from "@gen/domain";
import type { ProviderJob } from "@gen/providers";

const SIM_ID_PREFIX = "sim_";
// A decoded id is bounded like the request body it came from (1 MiB), with room to spare.
const MAX_DECODED_BYTES = 4 * 1024 * 1024;

export interface SimJobState {
  job: ProviderJob;
  startedAt: number;
}

interface Encoded {
  v: 1;
  id: string;
  e: Endpoint;
  m: string;
  u?: string;
  p: Record<string, unknown>;
  d?: number;
  t: number;
}

/**
 * The whole job and its start time, compressed into the id. The id is all a worker keeps, so
 * another process can poll it after a crash and compute the same result at the same moment.
 */
export function encodeSimUpstreamId({ job, startedAt }: SimJobState): string {
  const encoded: Encoded = { v: 1, id: job.taskId, e: job.endpoint, m: job.model, u: job.upstreamModel, p: job.params, d: job.delayMs, t: startedAt };
  return SIM_ID_PREFIX + deflateRawSync(Buffer.from(JSON.stringify(encoded))).toString("base64url");
}

/** The job behind an id, or undefined when the id was not made by encodeSimUpstreamId. */
export function decodeSimUpstreamId(upstreamId: string): SimJobState | undefined {
  if (!upstreamId.startsWith(SIM_ID_PREFIX)) return undefined;
  let value: Partial<Encoded>;
  try {
    const json = inflateRawSync(Buffer.from(upstreamId.slice(SIM_ID_PREFIX.length), "base64url"), { maxOutputLength: MAX_DECODED_BYTES });
    value = JSON.parse(json.toString("utf8")) as Partial<Encoded>;
  } catch {
    return undefined;
  }
  if (
    value === null ||
    typeof value !== "object" ||
    value.v !== 1 ||
    typeof value.id !== "string" ||
    !isEndpoint(value.e) ||
    typeof value.m !== "string" ||
    (value.u !== undefined && typeof value.u !== "string") ||
    value.p === null ||
    typeof value.p !== "object" ||
    Array.isArray(value.p) ||
    (value.d !== undefined && typeof value.d !== "number") ||
    typeof value.t !== "number"
  ) {
    return undefined;
  }
  const job: ProviderJob = { taskId: value.id, endpoint: value.e, model: value.m, params: value.p };
  if (value.u !== undefined) job.upstreamModel = value.u;
  if (value.d !== undefined) job.delayMs = value.d;
  return { job, startedAt: value.t };
}
