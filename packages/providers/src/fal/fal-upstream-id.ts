// A fal request is addressed by its model id and its request id together (the status, result and
// cancel URLs are built from both), so the upstream id carries both: a poll from any worker, also
// after a crash, finds the request again with nothing else. It reads as fal's own URL path.
const SEPARATOR = "/requests/";

export interface FalRequestRef {
  endpointId: string;
  requestId: string;
}

export function falUpstreamId(ref: FalRequestRef): string {
  return `${ref.endpointId}${SEPARATOR}${ref.requestId}`;
}

export function parseFalUpstreamId(upstreamId: string): FalRequestRef | undefined {
  const at = upstreamId.lastIndexOf(SEPARATOR);
  if (at <= 0) return undefined;
  const requestId = upstreamId.slice(at + SEPARATOR.length);
  if (requestId === "" || requestId.includes("/")) return undefined;
  return { endpointId: upstreamId.slice(0, at), requestId };
}
