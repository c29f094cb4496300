import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { CatalogError, catalogSchema, createCatalog, DEFAULT_CATALOG_PATH, loadCatalog, ENDPOINTS } from "@gen/catalog";
import { entry, removeTempCatalogs, writeTempCatalog } from "./temp-catalog.ts";

afterAll(removeTempCatalogs);

const shipped = JSON.parse(readFileSync(DEFAULT_CATALOG_PATH, "utf8")) as { models: Record<string, unknown>[] };

function loadError(content: unknown): string {
  const file = writeTempCatalog(content);
  try {
    loadCatalog(file);
  } catch (error) {
    expect(error).toBeInstanceOf(CatalogError);
    return (error as Error).message;
  }
  throw new Error("expected the catalog to be refused");
}

describe("the shipped catalog", () => {
  const catalog = loadCatalog();

  it("has the required models", () => {
    const ids = catalog.models.map((m) => m.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        "sim-image-1",
        "sim-image-1-tokens",
        "upstream-image-1",
        "sim-video-1",
        "sim-audio-1",
        "sim-detect-1",
        "sim-humanize-1",
        "sim-essay-1",
        "sim-moderation-1",
      ]),
    );
    for (const endpoint of ENDPOINTS) {
      expect(catalog.modelsFor(endpoint).some((m) => m.provider === "simulated")).toBe(true);
    }
    expect(catalog.model("upstream-image-1")).toMatchObject({ provider: "http", endpoint: "images", upstreamModel: "upstream-image-1" });
    expect(catalog.model("sim-image-1")).toMatchObject({
      contentFilter: true,
      maxPromptLength: 4000,
      sizes: ["256x256", "512x512", "1024x1024"],
      qualities: ["standard", "hd"],
    });
    expect(catalog.model("sim-image-1-tokens")?.pricing?.method).toBe("tokens");
    expect(catalog.model("missing")).toBeUndefined();
    expect(catalog.model("constructor")).toBeUndefined();
  });

  it("is valid against the exported catalogSchema", () => {
    const ajv = new Ajv({ allErrors: true, strictRequired: false });
    addFormats(ajv);
    ajv.addFormat("http-url", /^https?:\/\//);
    expect(ajv.validate(catalogSchema, shipped)).toBe(true);
  });

  it("is frozen", () => {
    const model = catalog.models[0];
    expect(Object.isFrozen(catalog.models)).toBe(true);
    expect(Object.isFrozen(model)).toBe(true);
    expect(Object.isFrozen(model?.schema)).toBe(true);
  });

  it("gives each model's request schema with webhook_url", () => {
    const model = catalog.model("sim-image-1");
    if (!model) throw new Error("missing model");
    const schema = catalog.requestSchema(model) as { required: string[]; additionalProperties: boolean; properties: Record<string, unknown> };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(["model", "prompt"]);
    expect(schema.properties.webhook_url).toEqual({ type: "string", format: "uri", maxLength: 2048 });
    expect(schema.properties.size).toEqual({ type: "string", enum: ["256x256", "512x512", "1024x1024"], default: "1024x1024" });
    expect(schema.properties.content_filter).toEqual({ type: "boolean" });
    expect(schema.properties.prompt).toEqual({ type: "string", minLength: 1, maxLength: 4000 });
    expect(Object.keys(schema.properties)).toEqual(["model", "prompt", "size", "quality", "content_filter", "n", "image_url", "webhook_url"]);
    // A copy: callers may change it.
    (schema.properties as Record<string, unknown>).extra = {};
    expect((catalog.requestSchema(model) as typeof schema).properties.extra).toBeUndefined();
    expect(model.schema).not.toHaveProperty("properties.webhook_url");
  });

  it("loads the same from an explicit path", () => {
    expect(loadCatalog(writeTempCatalog(shipped)).models.map((m) => m.id)).toEqual(loadCatalog().models.map((m) => m.id));
  });
});

describe("invalid catalog files", () => {
  it("a missing file", () => {
    expect(() => loadCatalog("/nonexistent/models.json")).toThrow(/^Cannot read model catalog \/nonexistent\/models\.json: ENOENT/);
  });

  it("malformed JSON", () => {
    expect(loadError("{ models: [")).toMatch(/^Model catalog .*models\.json is not valid JSON: /);
  });

  const refused: [string, unknown, RegExp][] = [
    ["not an object", [], /is invalid: \(top level\) must be object/],
    ["no models", {}, /must have required property 'models'/],
    ["unknown top-level field", { models: [], extra: 1 }, /must NOT have additional properties \(extra\)/],
    [
      "unknown endpoint",
      { models: [entry({ endpoint: "songs" })] },
      /\/models\/0\/endpoint \[model test-image\] must be one of "images", "videos", "audio", "detect", "humanize", "essay", "moderations"/,
    ],
    ["unknown provider", { models: [entry({ provider: "acme" })] }, /\/models\/0\/provider/],
    ["missing moderationRefund", { models: [entry({ moderationRefund: undefined })] }, /must have required property 'moderationRefund'/],
    ["negative moderation refund", { models: [entry({ moderationRefund: { output: -1 } })] }, /\/models\/0\/moderationRefund\/output/],
    ["input-stage refund not 0", { models: [entry({ moderationRefund: { input: 2, output: 1 } })] }, /\/models\/0\/moderationRefund\/input/],
    ["misspelled field", { models: [entry({ maxPromptLenght: 10 })] }, /additional properties \(maxPromptLenght\)/],
    ["bad id", { models: [entry({ id: "has space" })] }, /\/models\/0\/id/],
    ["zero maxPromptLength", { models: [entry({ maxPromptLength: 0 })] }, /\/models\/0\/maxPromptLength/],
    ["empty sizes", { models: [entry({ sizes: [] })] }, /\/models\/0\/sizes/],
    ["duplicate sizes", { models: [entry({ sizes: ["1x1", "1x1"] })] }, /\/models\/0\/sizes/],
    ["unknown pricing method", { models: [entry({ pricing: { method: "free", credits: 0 } })] }, /\/models\/0\/pricing\/method/],
    ["negative credits", { models: [entry({ pricing: { method: "flat", credits: -1 } })] }, /\/models\/0\/pricing\/credits/],
    ["tokens without rates", { models: [entry({ pricing: { method: "tokens", credits: 5 } })] }, /must have required property 'inputPer1k'/],
    [
      "rates on flat pricing",
      { models: [entry({ pricing: { method: "flat", credits: 5, inputPer1k: 1 } })] },
      /\/models\/0\/pricing\/inputPer1k \[model test-image\] is not allowed here/,
    ],
    [
      "unit with zero per",
      { models: [entry({ pricing: { method: "flat", credits: 1, units: [{ param: "prompt", per: 0 }] } })] },
      /\/models\/0\/pricing\/units\/0/,
    ],
    [
      "parameters without properties",
      { models: [entry({ parameters: { type: "object" } })] },
      /\/models\/0\/parameters \[model test-image\] must have required property 'properties'/,
    ],
    ["bad upstreamUrl", { models: [entry({ upstreamUrl: "ftp://x" })] }, /\/models\/0\/upstreamUrl \[model test-image\] must match format "http-url"/],
  ];
  it.each(refused)("%s", (_label, content, message) => {
    expect(loadError(content)).toMatch(message);
  });

  const crossField: [string, unknown, string][] = [
    ["duplicate ids", { models: [entry(), entry()] }, "model id test-image appears twice"],
    ["defaultSize not among sizes", { models: [entry({ sizes: ["1x1"], defaultSize: "2x2" })] }, 'model test-image: defaultSize "2x2" is not one of its sizes'],
    ["defaultQuality without qualities", { models: [entry({ defaultQuality: "hd" })] }, 'model test-image: defaultQuality "hd" is not one of its qualities'],
    [
      "parameters declaring a derived field",
      { models: [entry({ parameters: { properties: { size: { type: "string" } } } })] },
      'model test-image: parameters must not declare "size"',
    ],
    [
      "parameters declaring webhook_url",
      { models: [entry({ parameters: { properties: { webhook_url: { type: "string" } } } })] },
      'model test-image: parameters must not declare "webhook_url"',
    ],
    [
      "required parameter not declared",
      { models: [entry({ parameters: { properties: {}, required: ["style"] } })] },
      'model test-image: required parameter "style" is not in parameters.properties',
    ],
    [
      "invalid parameter schema",
      { models: [entry({ parameters: { properties: { n: { type: "integr" } } } })] },
      "model test-image: invalid parameters schema: ",
    ],
    [
      "unknown schema keyword",
      { models: [entry({ parameters: { properties: { n: { type: "integer", maximun: 4 } } } })] },
      'strict mode: unknown keyword: "maximun"',
    ],
    ["unknown format", { models: [entry({ parameters: { properties: { when: { type: "string", format: "moment" } } } })] }, 'unknown format "moment"'],
    [
      "pricing on an unknown parameter",
      { models: [entry({ pricing: { method: "flat", credits: 1, units: ["n"] } })] },
      'model test-image: pricing refers to "n", which is not a parameter of this model',
    ],
    [
      "multiplier on size for a model without sizes",
      { models: [entry({ pricing: { method: "flat", credits: 1, multipliers: { size: { "1x1": 1 } } } })] },
      'model test-image: pricing refers to "size"',
    ],
  ];
  it.each(crossField)("%s", (_label, content, message) => {
    const text = loadError(content);
    expect(text).toMatch(/^Model catalog .*models\.json is invalid: /);
    expect(text).toContain(message);
  });

  it("createCatalog refuses in-memory content the same way", () => {
    expect(() => createCatalog({ models: [entry({ endpoint: "nope" })] }, "test catalog")).toThrow(/^test catalog is invalid: /);
  });
});
