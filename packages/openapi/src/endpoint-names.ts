import type { Endpoint } from "@gen/domain";

/** Component-name stem per endpoint: `ImagesRequest`, `ImagesOutput`, `ImagesTask`, … */
export const ENDPOINT_NAMES: Readonly<Record<Endpoint, string>> = Object.freeze({
  images: "Images",
  videos: "Videos",
  audio: "Audio",
  detect: "Detect",
  humanize: "Humanize",
  essay: "Essay",
  moderations: "Moderations",
});

/**
 * `Model` + the id in PascalCase (`sim-image-1` → `ModelSimImage1`): component names become type
 * names in generated clients, so they hold letters and digits only.
 */
export function modelSchemaName(modelId: string): string {
  const words = modelId.split(/[^A-Za-z0-9]+/).filter((word) => word !== "");
  return `Model${words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join("")}`;
}
