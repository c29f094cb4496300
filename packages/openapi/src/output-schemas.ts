import type { Endpoint } from "@gen/domain";
import type { Json } from "./json.ts";

const urls = (what: string): Json => ({
  type: "array",
  items: { type: "string", format: "uri" },
  description: `Addresses of the stored ${what} files, under the service's CDN URL.`,
});

const probability: Json = { type: "number", minimum: 0, maximum: 1 };

/** `output` of a completed task, per endpoint (docs/api.md#outputs-per-endpoint). */
export const OUTPUT_SCHEMAS: Readonly<Record<Endpoint, Json>> = {
  images: { type: "object", required: ["image_urls"], properties: { image_urls: urls("image") } },
  videos: { type: "object", required: ["video_urls"], properties: { video_urls: urls("video") } },
  audio: { type: "object", required: ["audio_urls"], properties: { audio_urls: urls("audio") } },
  detect: {
    type: "object",
    required: ["ai_probability", "label"],
    properties: {
      ai_probability: { ...probability, description: "Probability that the text was written by a model." },
      label: { type: "string", enum: ["ai", "human", "mixed"] },
    },
  },
  humanize: { type: "object", required: ["text"], properties: { text: { type: "string", description: "The rewritten text." } } },
  essay: {
    type: "object",
    required: ["text", "word_count"],
    properties: { text: { type: "string" }, word_count: { type: "integer", minimum: 0 } },
  },
  moderations: {
    type: "object",
    required: ["flagged", "categories", "category_scores"],
    properties: {
      flagged: { type: "boolean", description: "Whether any category is flagged, for any input string." },
      categories: { type: "object", additionalProperties: { type: "boolean" }, description: "Per category (e.g. `violence`), whether it is flagged." },
      category_scores: { type: "object", additionalProperties: probability, description: "Per category, the highest score over the input strings." },
    },
  },
};

export const OUTPUT_EXAMPLES: Readonly<Record<Endpoint, (cdnUrl: string) => Json>> = {
  images: (cdn) => ({ image_urls: [`${cdn}/tasks/task_0123456789abcdef0123456789abcdef/0.png`] }),
  videos: (cdn) => ({ video_urls: [`${cdn}/tasks/task_0123456789abcdef0123456789abcdef/0.mp4`] }),
  audio: (cdn) => ({ audio_urls: [`${cdn}/tasks/task_0123456789abcdef0123456789abcdef/0.wav`] }),
  detect: () => ({ ai_probability: 0.91, label: "ai" }),
  humanize: () => ({ text: "Results vary, so check them yourself." }),
  essay: () => ({ text: "Bridges join what rivers divide…", word_count: 412 }),
  moderations: () => ({ flagged: false, categories: { violence: false, hate: false }, category_scores: { violence: 0.004, hate: 0.001 } }),
};
