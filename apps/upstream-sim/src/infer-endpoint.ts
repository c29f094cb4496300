import type { Endpoint } from "@gen/domain";

// The protocol carries only a model name, as a real upstream's would; the simulator picks the kind
// of output from a word in that name and makes images otherwise.
const KEYWORDS: ReadonlyArray<[string, Endpoint]> = [
  ["video", "videos"],
  ["audio", "audio"],
  ["speech", "audio"],
  ["music", "audio"],
  ["detect", "detect"],
  ["humaniz", "humanize"],
  ["essay", "essay"],
  ["moderat", "moderations"],
];

export function inferEndpoint(model: string): Endpoint {
  const lower = model.toLowerCase();
  return KEYWORDS.find(([word]) => lower.includes(word))?.[1] ?? "images";
}
