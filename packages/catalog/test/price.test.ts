import { ApiError } from "@gen/errors";
import { ENDPOINT_INPUT_FIELD, loadCatalog, moderationCharge, tokenCharge, type Catalog, type Endpoint, type ModelEntry } from "@gen/catalog";
import { entry, removeTempCatalogs, writeTempCatalog } from "./temp-catalog.ts";

const catalog = loadCatalog();

afterAll(removeTempCatalogs);

function quote(endpoint: Endpoint, body: Record<string, unknown>, from: Catalog = catalog) {
  const { model, params } = from.validate(endpoint, body);
  return from.price(model, params);
}

function model(id: string, from: Catalog = catalog): ModelEntry {
  const found = from.model(id);
  if (!found) throw new Error(`no model ${id}`);
  return found;
}

describe("shipped prices", () => {
  const cases: [string, Endpoint, Record<string, unknown>, number, "flat" | "tokens"][] = [
    ["sim-image-1 defaults (1 × 1024x1024 standard)", "images", { model: "sim-image-1", prompt: "x" }, 4, "flat"],
    ["sim-image-1 n=3 256x256", "images", { model: "sim-image-1", prompt: "x", n: 3, size: "256x256" }, 3, "flat"],
    ["sim-image-1 n=2 512x512 hd", "images", { model: "sim-image-1", prompt: "x", n: 2, size: "512x512", quality: "hd" }, 8, "flat"],
    ["sim-image-1 n=4 1024x1024 hd", "images", { model: "sim-image-1", prompt: "x", n: 4, quality: "hd" }, 32, "flat"],
    ["sim-image-1-tokens defaults", "images", { model: "sim-image-1-tokens", prompt: "x" }, 8, "tokens"],
    ["sim-image-1-tokens n=2 256x256 hd", "images", { model: "sim-image-1-tokens", prompt: "x", n: 2, size: "256x256", quality: "hd" }, 8, "tokens"],
    ["upstream-image-1 defaults", "images", { model: "upstream-image-1", prompt: "x" }, 4, "flat"],
    ["upstream-image-1 n=3 512x512", "images", { model: "upstream-image-1", prompt: "x", n: 3, size: "512x512" }, 6, "flat"],
    ["sim-video-1 defaults (5 s 640x360)", "videos", { model: "sim-video-1", prompt: "x" }, 10, "flat"],
    ["sim-video-1 10 s 1280x720", "videos", { model: "sim-video-1", prompt: "x", duration_seconds: 10, size: "1280x720" }, 40, "flat"],
    ["sim-audio-1 defaults (10 s)", "audio", { model: "sim-audio-1", prompt: "x" }, 10, "flat"],
    ["sim-audio-1 3 s", "audio", { model: "sim-audio-1", prompt: "x", duration_seconds: 3 }, 3, "flat"],
    ["sim-detect-1 short text", "detect", { model: "sim-detect-1", text: "x" }, 1, "flat"],
    ["sim-detect-1 1000 code points", "detect", { model: "sim-detect-1", text: "🦊".repeat(1000) }, 1, "flat"],
    ["sim-detect-1 1001 characters", "detect", { model: "sim-detect-1", text: "x".repeat(1001) }, 2, "flat"],
    ["sim-humanize-1 2500 characters", "humanize", { model: "sim-humanize-1", text: "x".repeat(2500) }, 6, "flat"],
    ["sim-essay-1 defaults (500 words)", "essay", { model: "sim-essay-1", prompt: "x" }, 5, "flat"],
    ["sim-essay-1 150 words", "essay", { model: "sim-essay-1", prompt: "x", max_words: 150 }, 2, "flat"],
    ["sim-moderation-1 string", "moderations", { model: "sim-moderation-1", input: "x" }, 1, "flat"],
    ["sim-moderation-1 array", "moderations", { model: "sim-moderation-1", input: ["a", "b", "c"] }, 1, "flat"],
  ];
  it.each(cases)("%s", (_label, endpoint, body, reserve, method) => {
    expect(quote(endpoint, body)).toEqual({ reserve, method });
  });

  it("prices every shipped model with its defaults", () => {
    for (const m of catalog.models) {
      const result = quote(m.endpoint, { model: m.id, [ENDPOINT_INPUT_FIELD[m.endpoint]]: "x" });
      expect(Number.isSafeInteger(result.reserve) && result.reserve > 0).toBe(true);
    }
  });

  it("prices every size and quality a shipped model offers", () => {
    for (const m of catalog.models) {
      for (const size of m.sizes ?? [undefined]) {
        for (const quality of m.qualities ?? [undefined]) {
          const { params } = catalog.validate(m.endpoint, {
            model: m.id,
            [ENDPOINT_INPUT_FIELD[m.endpoint]]: "x",
            ...(size && { size }),
            ...(quality && { quality }),
          });
          expect(catalog.price(m, params).reserve).toBeGreaterThan(0);
        }
      }
    }
  });
});

describe("token billing", () => {
  const tokens = model("sim-image-1-tokens");

  it("keeps the rates in the entry", () => {
    expect(tokens.pricing).toMatchObject({ method: "tokens", inputPer1k: 1, outputPer1k: 2 });
  });

  it("charges by tokens, rounded up, never above the reservation", () => {
    expect(tokenCharge(tokens, { input: 0, output: 0 }, 8)).toBe(0);
    expect(tokenCharge(tokens, { input: 1000, output: 1000 }, 8)).toBe(3);
    expect(tokenCharge(tokens, { input: 1, output: 0 }, 8)).toBe(1);
    expect(tokenCharge(tokens, { input: 500, output: 1250 }, 8)).toBe(3);
    expect(tokenCharge(tokens, { input: 100_000, output: 100_000 }, 8)).toBe(8);
  });

  it("does not round float noise up", () => {
    const custom = loadCatalog(writeTempCatalog({ models: [entry({ pricing: { method: "tokens", credits: 100, inputPer1k: 0.3, outputPer1k: 0 } })] }));
    expect(tokenCharge(model("test-image", custom), { input: 10_000, output: 0 }, 100)).toBe(3);
  });

  it("refuses a flat-priced model", () => {
    expect(() => tokenCharge(model("sim-image-1"), { input: 1, output: 1 }, 4)).toThrow("not billed by tokens");
  });
});

describe("80006 policy", () => {
  it("keeps nothing for an input-stage verdict", () => {
    for (const m of catalog.models) expect(moderationCharge(m, "input", 100)).toBe(0);
  });

  it("keeps the model's output charge, capped at the reservation", () => {
    const video = model("sim-video-1");
    expect(video.moderationRefund).toEqual({ input: 0, output: 5 });
    expect(moderationCharge(video, "output", 10)).toBe(5);
    expect(moderationCharge(video, "output", 3)).toBe(3);
    expect(moderationCharge(model("sim-moderation-1"), "output", 1)).toBe(0);
  });
});

describe("30002 cannot determine pricing", () => {
  const sizes = ["256x256", "512x512"];
  const file = writeTempCatalog({
    models: [
      entry({ id: "no-pricing", pricing: undefined }),
      entry({ id: "missing-size", sizes, pricing: { method: "flat", credits: 1, multipliers: { size: { "256x256": 1 } } } }),
      entry({ id: "no-default-size", sizes, pricing: { method: "flat", credits: 1, multipliers: { size: { "256x256": 1, "512x512": 2 } } } }),
      entry({ id: "fractional", sizes, pricing: { method: "flat", credits: 1, multipliers: { size: { "256x256": 0.5, "512x512": 1 } } } }),
      entry({
        id: "optional-unit",
        parameters: { properties: { n: { type: "integer", minimum: 1 } } },
        pricing: { method: "flat", credits: 2, units: ["n"] },
      }),
      entry({
        id: "float-noise",
        sizes,
        defaultSize: "256x256",
        pricing: { method: "flat", credits: 10, multipliers: { size: { "256x256": 0.3, "512x512": 0.7 } } },
      }),
      entry({
        id: "huge",
        parameters: { properties: { n: { type: "integer", minimum: 1, default: 1 } } },
        pricing: { method: "flat", credits: 9_000_000_000_000_000, units: ["n"] },
      }),
    ],
  });
  const custom = loadCatalog(file);

  function refusal(body: Record<string, unknown>): ApiError {
    try {
      quote("images", { prompt: "x", ...body }, custom);
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
    throw new Error("expected 30002");
  }

  it.each([
    ["no pricing", { model: "no-pricing" }, "Cannot determine pricing for model no-pricing: the catalog gives it no price"],
    [
      "a size missing from the table",
      { model: "missing-size", size: "512x512" },
      'Cannot determine pricing for model missing-size: no price is set for size "512x512"',
    ],
    [
      "no size and no default",
      { model: "no-default-size" },
      "Cannot determine pricing for model no-default-size: its price depends on size, which was not given and has no default",
    ],
    [
      "a fractional total",
      { model: "fractional", size: "256x256" },
      "Cannot determine pricing for model fractional: the computed price (0.5) is not a whole number of credits",
    ],
    [
      "a unit not given",
      { model: "optional-unit" },
      "Cannot determine pricing for model optional-unit: its price depends on n, which was not given as a countable value",
    ],
    [
      "a total beyond safe integers",
      { model: "huge", n: 2 },
      /^Cannot determine pricing for model huge: the computed price .* is not a whole number of credits$/,
    ],
  ])("%s", (_label, body, message) => {
    const error = refusal(body);
    expect(error.code).toBe(30002);
    expect(error.status).toBe(400);
    expect(error.message).toEqual(typeof message === "string" ? message : expect.stringMatching(message));
  });

  it("prices the same models when the params allow it", () => {
    expect(quote("images", { model: "missing-size", prompt: "x", size: "256x256" }, custom)).toEqual({ reserve: 1, method: "flat" });
    expect(quote("images", { model: "fractional", prompt: "x", size: "512x512" }, custom).reserve).toBe(1);
    expect(quote("images", { model: "optional-unit", prompt: "x", n: 3 }, custom).reserve).toBe(6);
    expect(quote("images", { model: "float-noise", prompt: "x" }, custom).reserve).toBe(3);
    expect(quote("images", { model: "float-noise", prompt: "x", size: "512x512" }, custom).reserve).toBe(7);
  });

  it("validation still passes for a model it cannot price (30002 comes after the values)", () => {
    expect(custom.validate("images", { model: "no-pricing", prompt: "x" }).model.pricing).toBeUndefined();
  });
});
