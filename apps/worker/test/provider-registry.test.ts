import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { createCatalog } from "@gen/catalog";
import { loadConfig } from "@gen/config";
import type { ProviderKind } from "@gen/domain";
import type { Provider, ProviderOptions } from "@gen/providers";
import { checkProviderCredentials, createProviderRegistry } from "../src/generation/provider-registry.ts";

const run = promisify(execFile);

const entry = (overrides: Record<string, unknown>) => ({
  id: "m",
  endpoint: "images",
  provider: "simulated",
  moderationRefund: { output: 0 },
  pricing: { method: "flat", credits: 1 },
  ...overrides,
});

const routed = createCatalog({
  models: [
    entry({
      id: "flux",
      provider: "replicate",
      upstreamModel: "black-forest-labs/flux-schnell",
      fallbacks: [{ provider: "fal", upstreamModel: "fal-ai/flux/schnell" }],
    }),
    entry({ id: "flux-mirror", provider: "replicate", upstreamModel: "black-forest-labs/flux-schnell", upstreamUrl: "http://127.0.0.1:9/v1" }),
    entry({ id: "sim", provider: "simulated" }),
  ],
});

test("a route whose provider has no credential is named with its model and variable, fallbacks included", () => {
  const env = { REPLICATE_API_TOKEN: "r8_x" };
  expect(() => checkProviderCredentials(routed, loadConfig(env))).toThrow("model flux uses provider fal, but FAL_KEY is not set");
  expect(() => checkProviderCredentials(routed, loadConfig({ FAL_KEY: "k" }))).toThrow(
    "model flux uses provider replicate, but REPLICATE_API_TOKEN is not set",
  );
  expect(() => checkProviderCredentials(routed, loadConfig({ ...env, FAL_KEY: "  " }))).toThrow("FAL_KEY is not set");
  expect(() => checkProviderCredentials(routed, loadConfig({ ...env, FAL_KEY: "k" }))).not.toThrow();
});

test("one instance per kind and API base, built at start-up with the credential, the timeout and the answer cap", () => {
  const built: [ProviderKind, ProviderOptions][] = [];
  const factory = (kind: ProviderKind) => (options: ProviderOptions) => {
    built.push([kind, options]);
    return { kind } as unknown as Provider;
  };
  const factories = Object.fromEntries((["simulated", "http", "replicate", "fal", "openai", "runway"] as const).map((k) => [k, factory(k)])) as Record<
    ProviderKind,
    (o: ProviderOptions) => Provider
  >;
  const config = loadConfig({ REPLICATE_API_TOKEN: "r8_x", FAL_KEY: "fal_x", UPSTREAM_TIMEOUT_MS: "1234", UPSTREAM_MAX_RESPONSE_BYTES: "4096" });
  const registry = createProviderRegistry(routed, config, factories);
  expect(built).toEqual([
    ["replicate", { apiKey: "r8_x", timeoutMs: 1234, maxResponseBytes: 4096 }],
    ["fal", { apiKey: "fal_x", timeoutMs: 1234, maxResponseBytes: 4096 }],
    ["replicate", { baseUrl: "http://127.0.0.1:9/v1", apiKey: "r8_x", timeoutMs: 1234, maxResponseBytes: 4096 }],
    ["simulated", { timeoutMs: 1234, maxResponseBytes: 4096 }],
  ]);
  const flux = routed.model("flux")!;
  expect(registry(flux.routes[0]!)).toBe(registry(routed.model("flux")!.routes[0]!));
  expect(registry(flux.routes[0]!)).not.toBe(registry(routed.model("flux-mirror")!.routes[0]!));
  expect(built).toHaveLength(4);
});

describe("worker start-up", () => {
  const catalogFile = (models: unknown[]) => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "gen-registry-")), "models.json");
    writeFileSync(file, JSON.stringify({ models }));
    return file;
  };
  const start = async (env: Record<string, string>) => {
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(REPLICATE_API_TOKEN|FAL_KEY|OPENAI_API_KEY|RUNWAYML_API_SECRET)$/.test(name)),
    );
    return run(process.execPath, ["--conditions=@gen/source", "--import", "tsx", "apps/worker/src/main.ts"], {
      env: { ...clean, NODE_OPTIONS: "", LOG_LEVEL: "silent", ...env },
      timeout: 30_000,
    }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
  };

  test("a catalog using a provider whose variable is unset stops it with one line naming the model and the variable", async () => {
    const file = catalogFile([entry({ id: "gpt-image", provider: "openai", upstreamModel: "gpt-image-1" })]);
    const result = await start({ MODEL_CATALOG: file });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toEqual(["worker: model gpt-image uses provider openai, but OPENAI_API_KEY is not set"]);
  }, 40_000);
});
