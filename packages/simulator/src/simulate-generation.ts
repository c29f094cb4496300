import { simulateAudio } from "./audio-output.ts";
import { stringsIn, stripSimDirectives } from "./directives.ts";
import { simulateDetect } from "./detect-output.ts";
import { DEFAULT_MAX_WORDS, simulateEssay } from "./essay-output.ts";
import { simulateHumanize } from "./humanize-output.ts";
import { imageTokens, simulateImages } from "./image-output.ts";
import { intParam } from "./media-params.ts";
import { simulateModeration } from "./moderation-output.ts";
import type { CompletedResult, ProviderJob } from "@gen/providers";
import { canonicalJson, createRandom, seedOf } from "./seeded-random.ts";
import { simulateVideo } from "./video-output.ts";

/** The user's content (`prompt`, `text` or `input`), directives removed; arrays stay arrays. */
function contentOf(params: Record<string, unknown>): string[] {
  const content = params.prompt ?? params.text ?? params.input;
  return stringsIn(content).map(stripSimDirectives);
}

/**
 * The simulated output of a job: a pure function of endpoint, model and params, so that any
 * process computes the same bytes (the task id and the time play no part).
 */
export function simulateGeneration(job: Pick<ProviderJob, "endpoint" | "model" | "params">): CompletedResult {
  const random = createRandom(seedOf(job.endpoint, job.model, canonicalJson(job.params)));
  const content = contentOf(job.params);
  const text = content.join("\n");
  switch (job.endpoint) {
    case "images":
      return { state: "completed", files: simulateImages(job.params, random), tokens: imageTokens(job.params, text) };
    case "videos":
      return { state: "completed", files: [simulateVideo(job.params, random)] };
    case "audio":
      return { state: "completed", files: [simulateAudio(job.params, random)] };
    case "detect":
      return { state: "completed", data: simulateDetect(text, random) };
    case "humanize":
      return { state: "completed", data: simulateHumanize(text) };
    case "essay":
      return { state: "completed", data: simulateEssay(text, intParam(job.params.max_words, DEFAULT_MAX_WORDS, 1, 100_000), random) };
    case "moderations":
      return { state: "completed", data: simulateModeration(content, random) };
  }
}
