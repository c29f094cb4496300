import { ApiError } from "@gen/errors";
import { createCatalog, ENDPOINTS, loadCatalog, type Endpoint } from "@gen/catalog";
import { entry } from "./temp-catalog.ts";

const catalog = loadCatalog();

function failure(endpoint: Endpoint, body: Record<string, unknown>, from = catalog): ApiError {
  try {
    from.validate(endpoint, body);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(body).slice(0, 200)} to be refused`);
}

function expectError(endpoint: Endpoint, body: Record<string, unknown>, code: number, message: string | RegExp): void {
  const error = failure(endpoint, body);
  expect({ code: error.code, message: error.message }).toEqual({
    code,
    message: typeof message === "string" ? message : expect.stringMatching(message),
  });
}

const image = (extra: Record<string, unknown> = {}) => ({ model: "sim-image-1", prompt: "a red fox", ...extra });
const emoji = (count: number) => "🦊".repeat(count);

describe("valid bodies", () => {
  const valid: [Endpoint, Record<string, unknown>][] = [
    ["images", image({ n: 4, size: "256x256", quality: "hd", content_filter: false, image_url: "https://example.com/a.png" })],
    ["images", { model: "sim-image-1-tokens", prompt: "x", content_filter: true, image_url: "http://example.com/a.png" }],
    ["images", { model: "upstream-image-1", prompt: "x", size: "512x512", n: 2 }],
    ["videos", { model: "sim-video-1", prompt: "x", duration_seconds: 10, size: "1280x720", image_url: "https://e.com/f.png" }],
    ["audio", { model: "sim-audio-1", prompt: "x", duration_seconds: 30, voice: "nova" }],
    ["detect", { model: "sim-detect-1", text: "some text" }],
    ["humanize", { model: "sim-humanize-1", text: "some text" }],
    ["essay", { model: "sim-essay-1", prompt: "x", max_words: 2000 }],
    ["moderations", { model: "sim-moderation-1", input: "hello" }],
    ["moderations", { model: "sim-moderation-1", input: Array.from({ length: 32 }, () => "") }],
  ];
  it.each(valid)("%s accepts %j", (endpoint, body) => {
    const { model, params } = catalog.validate(endpoint, body);
    expect(model.id).toBe(body.model);
    expect(params).toMatchObject(body);
  });

  it("fills schema defaults into params without touching the body", () => {
    const body = image();
    const { params } = catalog.validate("images", body);
    expect(params).toEqual({ ...body, n: 1, size: "1024x1024", quality: "standard" });
    expect(body).toEqual(image());
    expect(catalog.validate("essay", { model: "sim-essay-1", prompt: "x" }).params.max_words).toBe(500);
    expect(catalog.validate("videos", { model: "sim-video-1", prompt: "x" }).params).toMatchObject({ duration_seconds: 5, size: "640x360" });
  });

  it("accepts each shipped model on its own endpoint only", () => {
    for (const endpoint of ENDPOINTS) {
      expect(catalog.modelsFor(endpoint).length).toBeGreaterThan(0);
      for (const model of catalog.modelsFor(endpoint)) expect(model.endpoint).toBe(endpoint);
    }
  });
});

describe("20002 missing required parameter", () => {
  const cases: [Endpoint, Record<string, unknown>, string][] = [
    ["images", { prompt: "x" }, "model"],
    ["images", { model: "sim-image-1" }, "prompt"],
    ["videos", { model: "sim-video-1" }, "prompt"],
    ["audio", { model: "sim-audio-1" }, "prompt"],
    ["essay", { model: "sim-essay-1" }, "prompt"],
    ["detect", { model: "sim-detect-1", prompt: "x" }, "text"],
    ["humanize", { model: "sim-humanize-1" }, "text"],
    ["moderations", { model: "sim-moderation-1", text: "x" }, "input"],
    ["moderations", {}, "model"],
    ["images", { model: undefined, prompt: "x" }, "model"],
    ["images", { model: "sim-image-1", prompt: undefined }, "prompt"],
  ];
  it.each(cases)("%s %j names %s", (endpoint, body, field) => {
    expectError(endpoint, body, 20002, `Missing required parameter: ${field}`);
  });

  it("checks model first, then the input field", () => {
    expectError("images", {}, 20002, "Missing required parameter: model");
    expectError("detect", { foo: 1 }, 20002, "Missing required parameter: model");
  });

  it("does not read inherited properties as present", () => {
    const body = Object.create({ model: "sim-image-1", prompt: "x" }) as Record<string, unknown>;
    expectError("images", body, 20002, "Missing required parameter: model");
  });

  it("reports a model-specific required parameter after the model check and before other values", () => {
    const strict = createCatalog({
      models: [
        entry({
          id: "needs-style",
          sizes: ["1x1"],
          parameters: { properties: { style: { type: "string" }, seed: { type: "integer" } }, required: ["style"] },
        }),
      ],
    });
    expect(failure("images", { model: "needs-style", prompt: "x", seed: "bad", size: "2x2" }, strict)).toMatchObject({
      code: 20002,
      message: "Missing required parameter: style",
    });
    expect(failure("images", { model: "nope", prompt: "x" }, strict).code).toBe(20004);
    expect(failure("images", { model: "needs-style", prompt: "x", style: "a", seed: "bad" }, strict)).toMatchObject({
      code: 20003,
      message: "Invalid value for seed: must be an integer",
    });
  });
});

describe("20004 model not on this endpoint", () => {
  it("names an unknown model and the endpoint", () => {
    expectError("images", image({ model: "dall-e-9" }), 20004, 'Model "dall-e-9" is not supported on /api/v1/images/generations');
  });

  it("refuses a model of another endpoint", () => {
    expectError(
      "images",
      image({ model: "sim-video-1" }),
      20004,
      'Model "sim-video-1" is not supported on /api/v1/images/generations (it is a model of /api/v1/videos/generations)',
    );
    expectError("moderations", { model: "sim-detect-1", input: "x" }, 20004, /not supported on \/api\/v1\/moderations/);
  });

  it.each([
    [42, "number 42"],
    [null, "null"],
    [true, "boolean true"],
    [["sim-image-1"], "an array"],
    [{ id: "sim-image-1" }, "an object"],
  ])("refuses the non-string model %j as an invalid value (20003)", (model, kind) => {
    expectError(
      "images",
      image({ model }),
      20003,
      `Invalid value for model: must be a string naming a model supported on /api/v1/images/generations; got ${kind}`,
    );
  });

  it("quotes and truncates what it echoes", () => {
    const error = failure("images", image({ model: `evil"\n${"x".repeat(5000)}` }));
    expect(error.code).toBe(20004);
    expect(error.message).toContain('"evil\\"\\n');
    expect(error.message).toContain("…");
    expect(error.message.length).toBeLessThan(200);
  });

  it("does not resolve prototype names as models", () => {
    expect(failure("images", image({ model: "constructor" })).code).toBe(20004);
    expect(failure("images", image({ model: "__proto__" })).code).toBe(20004);
  });
});

describe("20003 invalid values", () => {
  const cases: [string, Endpoint, Record<string, unknown>, string][] = [
    ["n too large", "images", image({ n: 5 }), "Invalid value for n: must be an integer between 1 and 4"],
    ["n zero", "images", image({ n: 0 }), "Invalid value for n: must be an integer between 1 and 4"],
    ["n fractional", "images", image({ n: 1.5 }), "Invalid value for n: must be an integer between 1 and 4"],
    ["n as string", "images", image({ n: "2" }), "Invalid value for n: must be an integer between 1 and 4"],
    ["prompt as number", "images", image({ prompt: 7 }), "Invalid value for prompt: must be a string of 1 to 4000 characters"],
    ["prompt null", "images", image({ prompt: null }), "Invalid value for prompt: must be a string of 1 to 4000 characters"],
    ["prompt empty", "images", image({ prompt: "" }), "Invalid value for prompt: must be a string of 1 to 4000 characters"],
    ["text as array", "detect", { model: "sim-detect-1", text: ["a"] }, "Invalid value for text: must be a string of 1 to 20000 characters"],
    [
      "image_url ftp",
      "images",
      image({ image_url: "ftp://example.com/a.png" }),
      "Invalid value for image_url: must be an http(s) URL of at most 2048 characters",
    ],
    [
      "image_url javascript",
      "videos",
      { model: "sim-video-1", prompt: "x", image_url: "javascript:alert(1)" },
      "Invalid value for image_url: must be an http(s) URL of at most 2048 characters",
    ],
    ["image_url relative", "images", image({ image_url: "/a.png" }), "Invalid value for image_url: must be an http(s) URL of at most 2048 characters"],
    [
      "image_url with space",
      "images",
      image({ image_url: "https://exa mple.com/" }),
      "Invalid value for image_url: must be an http(s) URL of at most 2048 characters",
    ],
    [
      "image_url too long",
      "images",
      image({ image_url: `https://example.com/${"a".repeat(2048)}` }),
      "Invalid value for image_url: must be an http(s) URL of at most 2048 characters",
    ],
    [
      "image_url object",
      "images",
      image({ image_url: { url: "https://example.com" } }),
      "Invalid value for image_url: must be an http(s) URL of at most 2048 characters",
    ],
    [
      "duration too long",
      "videos",
      { model: "sim-video-1", prompt: "x", duration_seconds: 11 },
      "Invalid value for duration_seconds: must be an integer between 1 and 10",
    ],
    [
      "audio duration",
      "audio",
      { model: "sim-audio-1", prompt: "x", duration_seconds: 0 },
      "Invalid value for duration_seconds: must be an integer between 1 and 30",
    ],
    ["voice enum", "audio", { model: "sim-audio-1", prompt: "x", voice: "darth" }, 'Invalid value for voice: must be one of "alloy", "echo", "nova", "sage"'],
    ["max_words", "essay", { model: "sim-essay-1", prompt: "x", max_words: 10 }, "Invalid value for max_words: must be an integer between 50 and 2000"],
    ["size of wrong type", "images", image({ size: 512 }), 'Invalid value for size: must be one of "256x256", "512x512", "1024x1024"'],
    ["quality of wrong type", "images", image({ quality: ["hd"] }), 'Invalid value for quality: must be one of "standard", "hd"'],
    ["content_filter as string", "images", image({ content_filter: "false" }), "Invalid value for content_filter: must be a boolean"],
    [
      "content_filter null",
      "images",
      { model: "sim-image-1-tokens", prompt: "x", content_filter: null },
      "Invalid value for content_filter: must be a boolean",
    ],
  ];
  it.each(cases)("%s", (_label, endpoint, body, message) => expectError(endpoint, body, 20003, message));

  describe("moderations input", () => {
    const INPUT = "Invalid value for input: must be a string of 1 to 10000 characters or an array of 1 to 32 items, each a string of at most 10000 characters";
    it.each([
      ["empty array", []],
      ["33 strings", Array.from({ length: 33 }, () => "x")],
      ["array with a number", ["ok", 3]],
      ["empty string", ""],
      ["object", { text: "x" }],
      ["null", null],
    ])("%s", (_label, input) => expectError("moderations", { model: "sim-moderation-1", input }, 20003, INPUT));
  });

  describe("unknown parameters", () => {
    it("names the field", () => {
      expectError("images", image({ foo: 1 }), 20003, "Unknown parameter: foo");
      expectError("detect", { model: "sim-detect-1", text: "x", prompt: "y" }, 20003, "Unknown parameter: prompt");
    });

    it("rejects webhook_url, which the caller must remove first", () => {
      expectError("images", image({ webhook_url: "https://example.com/" }), 20003, "Unknown parameter: webhook_url");
    });

    it("rejects prototype-looking names", () => {
      const body = JSON.parse('{"model":"sim-image-1","prompt":"x","__proto__":{"n":9}}') as Record<string, unknown>;
      expectError("images", body, 20003, "Unknown parameter: __proto__");
      expectError("images", image({ constructor: 1 }), 20003, "Unknown parameter: constructor");
    });

    it("quotes odd names and truncates long ones", () => {
      expectError("images", image({ "a b\n": 1 }), 20003, 'Unknown parameter: "a b\\n"');
      const error = failure("images", image({ ["k".repeat(10_000)]: 1 }));
      expect(error.code).toBe(20003);
      expect(error.message).toBe(`Unknown parameter: "${"k".repeat(100)}…"`);
    });

    it("reports the first unknown field of the body", () => {
      expectError("images", image({ zeta: 1, alpha: 2 }), 20003, "Unknown parameter: zeta");
    });
  });

  describe("content_filter per model", () => {
    it("is accepted as a boolean by models that declare it", () => {
      for (const id of ["sim-image-1", "sim-image-1-tokens"]) {
        for (const value of [true, false]) {
          expect(catalog.validate("images", { model: id, prompt: "x", content_filter: value }).params.content_filter).toBe(value);
        }
      }
    });

    it("is an unknown field on models that do not", () => {
      expectError("images", { model: "upstream-image-1", prompt: "x", content_filter: false }, 20003, "Unknown parameter: content_filter");
      expectError("videos", { model: "sim-video-1", prompt: "x", content_filter: true }, 20003, "Unknown parameter: content_filter");
      expectError("moderations", { model: "sim-moderation-1", input: "x", content_filter: false }, 20003, "Unknown parameter: content_filter");
    });

    it("follows contentFilter in a custom catalog", () => {
      const custom = createCatalog({
        models: [entry({ id: "with", contentFilter: true }), entry({ id: "without", contentFilter: false }), entry({ id: "default" })],
      });
      expect(custom.validate("images", { model: "with", prompt: "x", content_filter: false }).params.content_filter).toBe(false);
      expect(failure("images", { model: "without", prompt: "x", content_filter: false }, custom).message).toBe("Unknown parameter: content_filter");
      expect(failure("images", { model: "default", prompt: "x", content_filter: true }, custom).message).toBe("Unknown parameter: content_filter");
    });
  });
});

describe("20005 size, 20006 quality, 20007 prompt length", () => {
  it("20005 names the size, the model and the supported sizes", () => {
    expectError(
      "images",
      image({ size: "2048x2048" }),
      20005,
      'Size "2048x2048" is not supported by model sim-image-1; supported sizes: 256x256, 512x512, 1024x1024',
    );
    expectError("images", { model: "upstream-image-1", prompt: "x", size: "256x256" }, 20005, /supported sizes: 512x512, 1024x1024$/);
    expectError("videos", { model: "sim-video-1", prompt: "x", size: "1024x1024" }, 20005, /^Size "1024x1024" is not supported by model sim-video-1/);
  });

  it("20005 truncates the echoed size", () => {
    const error = failure("images", image({ size: "9".repeat(1000) }));
    expect(error.code).toBe(20005);
    expect(error.message).toContain(`"${"9".repeat(100)}…"`);
    expect(error.message).not.toContain("9".repeat(101));
  });

  it("20005 / 20006 for a size or quality given to a model that has none", () => {
    expectError(
      "audio",
      { model: "sim-audio-1", prompt: "x", size: "256x256" },
      20005,
      'Size "256x256" is not supported by model sim-audio-1; it takes no size',
    );
    expectError("detect", { model: "sim-detect-1", text: "x", size: 512 }, 20005, "Size number 512 is not supported by model sim-detect-1; it takes no size");
    expectError(
      "images",
      { model: "upstream-image-1", prompt: "x", quality: "hd" },
      20006,
      'Quality "hd" is not supported by model upstream-image-1; it takes no quality',
    );
    expectError(
      "essay",
      { model: "sim-essay-1", prompt: "x", quality: null },
      20006,
      "Quality null is not supported by model sim-essay-1; it takes no quality",
    );
  });

  it("20006 names the quality and the supported qualities", () => {
    expectError("images", image({ quality: "ultra" }), 20006, 'Quality "ultra" is not supported by model sim-image-1; supported qualities: standard, hd');
  });

  it("20007 counts Unicode code points and states the limit", () => {
    // 4000 astral characters are 8000 UTF-16 units: still within the limit.
    expect(catalog.validate("images", image({ prompt: emoji(4000) })).params.prompt).toHaveLength(8000);
    expect(catalog.validate("images", image({ prompt: "é".repeat(4000) })).model.id).toBe("sim-image-1");
    expectError(
      "images",
      image({ prompt: emoji(4001) }),
      20007,
      "prompt exceeds the maximum length of 4000 characters (Unicode code points) for model sim-image-1; got 4001",
    );
    expectError("images", { model: "upstream-image-1", prompt: "a".repeat(2001) }, 20007, /maximum length of 2000 characters/);
  });

  it("20007 applies to text and to each moderations input", () => {
    expectError("detect", { model: "sim-detect-1", text: "a".repeat(20_001) }, 20007, /^text exceeds the maximum length of 20000 characters/);
    expectError("humanize", { model: "sim-humanize-1", text: emoji(10_001) }, 20007, /^text exceeds the maximum length of 10000 .*got 10001$/);
    expectError("moderations", { model: "sim-moderation-1", input: "a".repeat(10_001) }, 20007, /^input exceeds the maximum length of 10000/);
    expectError(
      "moderations",
      { model: "sim-moderation-1", input: ["ok", "a".repeat(10_001)] },
      20007,
      /^input\[1\] exceeds the maximum length of 10000 .*got 10001$/,
    );
  });

  it("does not echo the prompt", () => {
    const error = failure("images", image({ prompt: "secret".repeat(1000) }));
    expect(error.message).not.toContain("secret");
  });

  it("has no limit for a model without maxPromptLength", () => {
    const open = createCatalog({ models: [entry({ id: "open" })] });
    expect(open.validate("images", { model: "open", prompt: "a".repeat(100_000) }).model.id).toBe("open");
  });
});

describe("order of checks", () => {
  const cases: [string, Endpoint, Record<string, unknown>, number, string | RegExp][] = [
    ["missing prompt before unknown model", "images", { model: "nope", foo: 1 }, 20002, "Missing required parameter: prompt"],
    ["missing model before missing prompt", "images", { foo: 1 }, 20002, "Missing required parameter: model"],
    ["missing text before unknown model", "detect", { model: 3 }, 20002, "Missing required parameter: text"],
    ["unknown model before bad values", "images", { model: "nope", prompt: "", n: 99, size: "1x1" }, 20004, /^Model "nope"/],
    ["other endpoint's model before bad values", "images", { model: "sim-essay-1", prompt: "x", max_words: 1 }, 20004, /^Model "sim-essay-1"/],
    ["20003 before 20005", "images", image({ size: "1x1", n: 9 }), 20003, "Invalid value for n: must be an integer between 1 and 4"],
    ["unknown field before 20005", "images", image({ size: "1x1", foo: 1 }), 20003, "Unknown parameter: foo"],
    ["20003 before 20007", "images", image({ prompt: emoji(5000), image_url: "ftp://x" }), 20003, /^Invalid value for image_url/],
    ["20005 before 20006", "images", image({ quality: "ultra", size: "1x1" }), 20005, /^Size "1x1"/],
    ["20005 before 20007", "images", image({ prompt: emoji(5000), size: "1x1" }), 20005, /^Size "1x1"/],
    ["20006 before 20007", "images", image({ prompt: emoji(5000), quality: "ultra" }), 20006, /^Quality "ultra"/],
    ["size of wrong type is 20003, before quality", "images", image({ quality: "ultra", size: 1 }), 20003, /^Invalid value for size/],
    [
      "content_filter on a model without it before 20005",
      "images",
      { model: "upstream-image-1", prompt: "x", size: "1x1", content_filter: true },
      20003,
      "Unknown parameter: content_filter",
    ],
    ["first 20003 of the body wins", "images", image({ image_url: 1, n: 9 }), 20003, /^Invalid value for image_url/],
    ["first 20003 of the body wins (other order)", "images", { n: 9, image_url: 1, ...image() }, 20003, /^Invalid value for n/],
    ["a non-string model before the model's own checks", "detect", { model: [], text: "x", size: "1x1" }, 20003, /^Invalid value for model/],
    ["unknown field before a size the model lacks", "audio", { model: "sim-audio-1", prompt: "x", foo: 1, size: "1x1" }, 20003, "Unknown parameter: foo"],
    ["a size the model lacks before its quality", "audio", { model: "sim-audio-1", prompt: "x", quality: "hd", size: "1x1" }, 20005, /^Size "1x1"/],
    ["a quality the model lacks before 20007", "images", { model: "upstream-image-1", prompt: "a".repeat(2001), quality: "hd" }, 20006, /^Quality "hd"/],
    [
      "bad value before a size the model lacks",
      "audio",
      { model: "sim-audio-1", prompt: "x", size: "1x1", duration_seconds: 99 },
      20003,
      /^Invalid value for duration_seconds/,
    ],
    ["bad input item before over-long item", "moderations", { model: "sim-moderation-1", input: ["a".repeat(10_001), 1] }, 20003, /^Invalid value for input/],
  ];
  it.each(cases)("%s", (_label, endpoint, body, code, message) => expectError(endpoint, body, code, message));
});

describe("speed", () => {
  it("validates thousands of bodies per second", () => {
    const good = image({ n: 2, size: "512x512", quality: "hd", image_url: "https://example.com/a.png" });
    const bad = image({ n: 2, size: "9x9", foo: 1 });
    let refused = 0;
    const start = performance.now();
    for (let i = 0; i < 10_000; i++) {
      catalog.validate("images", good);
      try {
        catalog.validate("images", bad);
      } catch {
        refused++;
      }
    }
    const elapsed = performance.now() - start;
    expect(refused).toBe(10_000);
    // Generous: the real rate is far higher; this only catches per-request compilation.
    expect(elapsed).toBeLessThan(10_000);
  });
});
