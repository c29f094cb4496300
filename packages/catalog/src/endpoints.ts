import { ENDPOINTS, isEndpoint, type Endpoint } from "@gen/domain";

export { ENDPOINTS, isEndpoint, type Endpoint };

export const ENDPOINT_PATHS: Readonly<Record<Endpoint, string>> = Object.freeze({
  images: "/api/v1/images/generations",
  videos: "/api/v1/videos/generations",
  audio: "/api/v1/audio/generations",
  detect: "/api/v1/detect",
  humanize: "/api/v1/humanize",
  essay: "/api/v1/essay",
  moderations: "/api/v1/moderations",
});

/** The required field that carries the user's content (docs/api.md#request-bodies-per-endpoint). */
export type InputField = "prompt" | "text" | "input";

export const ENDPOINT_INPUT_FIELD: Readonly<Record<Endpoint, InputField>> = Object.freeze({
  images: "prompt",
  videos: "prompt",
  audio: "prompt",
  detect: "text",
  humanize: "text",
  essay: "prompt",
  moderations: "input",
});

/** Most strings a moderations `input` array may hold. */
export const MAX_MODERATION_INPUTS = 32;
