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

/** Component names may only hold `[A-Za-z0-9._-]`; a model id may hold more. */
export function modelSchemaName(modelId: string): string {
  return `Model.${modelId.replace(/[^A-Za-z0-9._-]/g, "_")}`;
}
