import { PROVIDER_KINDS } from "@gen/domain";
import { CatalogError, createCatalog } from "@gen/catalog";
import { entry } from "./temp-catalog.ts";

function refusal(overrides: Record<string, unknown>): string {
  try {
    createCatalog({ models: [entry(overrides)] });
  } catch (error) {
    expect(error).toBeInstanceOf(CatalogError);
    return (error as Error).message;
  }
  throw new Error("expected the catalog to be refused");
}

const model = (overrides: Record<string, unknown>) => createCatalog({ models: [entry(overrides)] }).models[0]!;

test("every provider kind is accepted", () => {
  for (const provider of PROVIDER_KINDS) expect(model({ provider, upstreamModel: "m" }).provider).toBe(provider);
});

test("routes: the primary (with the model's maxConcurrency), then the fallbacks in order", () => {
  const entry = model({
    provider: "replicate",
    upstreamModel: "black-forest-labs/flux-schnell",
    upstreamUrl: "https://api.replicate.com/v1",
    maxConcurrency: 4,
    fallbacks: [
      { provider: "fal", upstreamModel: "fal-ai/flux/schnell", maxConcurrency: 2 },
      { provider: "http", upstreamModel: "flux", upstreamUrl: "http://127.0.0.1:8090" },
    ],
    expectedDurationMs: 3000,
    upstreamInput: { output_format: "png", num_inference_steps: 4 },
    upstreamInputMap: { size: "aspect_ratio", n: null },
    sizes: ["1024x1024"],
    parameters: { properties: { n: { type: "integer", minimum: 1, maximum: 4, default: 1 } } },
  });
  const inputs = { upstreamInput: { output_format: "png", num_inference_steps: 4 }, upstreamInputMap: { size: "aspect_ratio", n: null } };
  expect(entry.routes).toEqual([
    { provider: "replicate", upstreamModel: "black-forest-labs/flux-schnell", upstreamUrl: "https://api.replicate.com/v1", maxConcurrency: 4, ...inputs },
    { provider: "fal", upstreamModel: "fal-ai/flux/schnell", maxConcurrency: 2, ...inputs },
    { provider: "http", upstreamModel: "flux", upstreamUrl: "http://127.0.0.1:8090", ...inputs },
  ]);
  expect(entry).toMatchObject({
    maxConcurrency: 4,
    expectedDurationMs: 3000,
    upstreamInput: { output_format: "png", num_inference_steps: 4 },
    upstreamInputMap: { size: "aspect_ratio", n: null },
  });
  expect(Object.isFrozen(entry.routes[1])).toBe(true);
});

test("a fallback's own upstreamInput and upstreamInputMap replace the model's for that route only", () => {
  const entry = model({
    endpoint: "audio",
    provider: "replicate",
    upstreamModel: "jaaari/kokoro-82m",
    upstreamInputMap: { prompt: "text" },
    fallbacks: [
      { provider: "fal", upstreamModel: "fal-ai/kokoro", upstreamInputMap: { prompt: "prompt" }, upstreamInput: { speed: 1 } },
      { provider: "http", upstreamModel: "tts" },
    ],
  });
  expect(entry.routes.map((route) => [route.upstreamInputMap, route.upstreamInput])).toEqual([
    [{ prompt: "text" }, undefined],
    [{ prompt: "prompt" }, { speed: 1 }],
    [{ prompt: "text" }, undefined],
  ]);
  expect(refusal({ fallbacks: [{ provider: "fal", upstreamModel: "m", upstreamInputMap: { nope: "x" } }] })).toMatch(/upstreamInputMap maps "nope"/);
});

test("without fallbacks the one route is the primary, named by the id when upstreamModel is absent", () => {
  expect(model({}).routes).toEqual([{ provider: "simulated", upstreamModel: "test-image" }]);
  expect(model({}).maxConcurrency).toBeUndefined();
});

test.each([
  ["an unknown fallback provider", { fallbacks: [{ provider: "acme", upstreamModel: "m" }] }, /\/models\/0\/fallbacks\/0\/provider/],
  ["a fallback without upstreamModel", { fallbacks: [{ provider: "fal" }] }, /fallbacks\/0 .*must have required property 'upstreamModel'/],
  ["a fallback with an unknown field", { fallbacks: [{ provider: "fal", upstreamModel: "m", model: "x" }] }, /additional properties \(model\)/],
  ["a fallback URL that is not http(s)", { fallbacks: [{ provider: "fal", upstreamModel: "m", upstreamUrl: "ftp://x" }] }, /fallbacks\/0\/upstreamUrl/],
  ["maxConcurrency 0", { maxConcurrency: 0 }, /\/models\/0\/maxConcurrency/],
  ["a fractional maxConcurrency", { maxConcurrency: 1.5 }, /\/models\/0\/maxConcurrency/],
  ["a fallback's maxConcurrency 0", { fallbacks: [{ provider: "fal", upstreamModel: "m", maxConcurrency: 0 }] }, /fallbacks\/0\/maxConcurrency/],
  ["a negative expectedDurationMs", { expectedDurationMs: -1 }, /\/models\/0\/expectedDurationMs/],
  ["upstreamInput that is not an object", { upstreamInput: ["x"] }, /\/models\/0\/upstreamInput/],
  ["an upstreamInputMap target that is a number", { upstreamInputMap: { size: 3 } }, /upstreamInputMap\/size/],
  ["an empty upstreamInputMap target", { upstreamInputMap: { prompt: "" } }, /upstreamInputMap\/prompt/],
  ["an upstreamInputMap naming a parameter the model lacks", { upstreamInputMap: { voice: "voice_id" } }, /model test-image: upstreamInputMap maps "voice"/],
])("refused: %s", (_name, overrides, pattern) => {
  expect(refusal(overrides)).toMatch(pattern);
});
