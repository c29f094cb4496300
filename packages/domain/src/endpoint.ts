// The task kinds the API accepts, one per submission route (docs/api.md#endpoints).
export const ENDPOINTS = ["images", "videos", "audio", "detect", "humanize", "essay", "moderations"] as const;

export type Endpoint = (typeof ENDPOINTS)[number];

/** Endpoints whose result is a set of stored files rather than a JSON answer. */
export const MEDIA_ENDPOINTS: readonly Endpoint[] = ["images", "videos", "audio"];

export function isEndpoint(value: unknown): value is Endpoint {
  return typeof value === "string" && (ENDPOINTS as readonly string[]).includes(value);
}
