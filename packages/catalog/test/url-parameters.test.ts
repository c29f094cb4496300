import { createCatalog, loadCatalog, urlParameters } from "@gen/catalog";
import { entry } from "./temp-catalog.ts";

describe("urlParameters", () => {
  const shipped = loadCatalog();

  test("every shipped model that takes a URL declares it as image_url, and it is found", () => {
    const withUrls = shipped.models.filter((model) => urlParameters(model, { image_url: "https://media.example/a.png" }).length > 0).map((m) => m.id);
    expect(withUrls).toEqual(["sim-image-1", "sim-image-1-tokens", "upstream-image-1", "sim-video-1"]);
    const model = shipped.model("upstream-image-1")!;
    const { params } = shipped.validate("images", { model: "upstream-image-1", prompt: "x", image_url: "http://169.254.169.254/" });
    expect(urlParameters(model, params)).toEqual([{ field: "image_url", url: "http://169.254.169.254/" }]);
    expect(urlParameters(model, shipped.validate("images", { model: "upstream-image-1", prompt: "x" }).params)).toEqual([]);
  });

  test("a prompt or another string that merely looks like a URL is not a URL parameter", () => {
    const model = shipped.model("sim-image-1")!;
    expect(urlParameters(model, { model: "sim-image-1", prompt: "http://127.0.0.1/", size: "256x256" })).toEqual([]);
  });

  test("an operator's schema: URLs by format or by name, at any depth, in arrays, tuples, maps and anyOf branches", () => {
    const catalog = createCatalog({
      models: [
        entry({
          id: "refs",
          parameters: {
            type: "object",
            properties: {
              refs: { type: "array", maxItems: 4, items: { type: "string", format: "uri" } },
              pair: { type: "array", items: [{ type: "string", format: "http-url" }, { type: "string" }], minItems: 2, additionalItems: false },
              mask: { type: "object", properties: { url: { type: "string" }, note: { type: "string" } } },
              named: { type: "object", properties: { fixed: { type: "string" } }, additionalProperties: { type: "string", format: "uri" } },
              either: {
                anyOf: [
                  { type: "string", format: "uri" },
                  { type: "string", enum: ["none"] },
                ],
              },
            },
          },
        }),
      ],
    });
    const model = catalog.model("refs")!;
    const params = {
      refs: ["https://a.example/1.png", "http://10.0.0.1/2.png"],
      pair: ["http://b.example/x", "http://not-a-url-parameter.example/"],
      mask: { url: "http://c.example/m.png", note: "http://ignored.example/" },
      named: { fixed: "http://ignored.example/", left: "ftp://d.example/l" },
      either: "none",
    };
    expect(urlParameters(model, params)).toEqual([
      { field: "refs[0]", url: "https://a.example/1.png" },
      { field: "refs[1]", url: "http://10.0.0.1/2.png" },
      { field: "pair[0]", url: "http://b.example/x" },
      { field: "mask.url", url: "http://c.example/m.png" },
      { field: "named.left", url: "ftp://d.example/l" },
    ]);
    expect(urlParameters(model, { ...params, either: "gopher://e.example/" })).toContainEqual({ field: "either", url: "gopher://e.example/" });
  });
});
