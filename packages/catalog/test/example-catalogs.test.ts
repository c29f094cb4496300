import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { ENDPOINTS, catalogSchema, loadCatalog } from "@gen/catalog";

// The example catalog of docs/providers.md: valid against the published schema and loadable as
// it is, with at least one model per endpoint and a fallback shown.
const file = path.join(import.meta.dirname, "../examples/providers.json");

test("examples/providers.json is valid against catalogSchema", () => {
  const ajv = new Ajv({ allErrors: true, strictRequired: false });
  addFormats(ajv);
  ajv.addFormat("http-url", /^https?:\/\//);
  const content: unknown = JSON.parse(readFileSync(file, "utf8"));
  expect(ajv.validate(catalogSchema, content) ? [] : ajv.errors).toEqual([]);
});

test("it loads, covers every endpoint on a real provider, and shows fallbacks", () => {
  const catalog = loadCatalog(file);
  for (const endpoint of ENDPOINTS) {
    expect({ endpoint, real: catalog.modelsFor(endpoint).some((m) => !["simulated", "http"].includes(m.provider)) }).toEqual({ endpoint, real: true });
  }
  expect(new Set(catalog.models.flatMap((m) => m.routes.map((r) => r.provider)))).toEqual(new Set(["replicate", "fal", "openai", "runway"]));
  expect(catalog.model("flux-schnell")?.routes.map((r) => `${r.provider} ${r.upstreamModel}`)).toEqual([
    "replicate black-forest-labs/flux-schnell",
    "fal fal-ai/flux/schnell",
  ]);
  expect(catalog.model("gen4-turbo")).toMatchObject({ upstreamModel: "gen4_turbo", provider: "runway" });
  expect(catalog.model("omni-moderation")?.upstreamModel).toBe("omni-moderation-latest");
  expect(catalog.model("gpt-image-1")?.upstreamModel).toBe("gpt-image-1");
  expect(catalog.model("sora-2")).toMatchObject({ endpoint: "videos", provider: "openai", upstreamModel: "sora-2" });
});
