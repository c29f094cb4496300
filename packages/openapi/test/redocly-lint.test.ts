import path from "node:path";
import { loadConfig, lintFromString } from "@redocly/openapi-core";
import { loadCatalog } from "@gen/catalog";
import { buildOpenApi } from "@gen/openapi";

const REDOCLY_CONFIG = path.resolve(import.meta.dirname, "../../../redocly.yaml");
// The server is the deployment's BASE_URL; a production one (the default, localhost, is a warning of its own).
const doc = buildOpenApi(loadCatalog(), { baseUrl: "https://gateway.gen.test" }) as { paths: Record<string, Record<string, { responses: object }>> };

test("Redocly's recommended rules (redocly.yaml) find nothing to warn about", async () => {
  const config = await loadConfig({ configPath: REDOCLY_CONFIG });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: path.resolve("openapi.json"), config });
  expect(problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ""}: ${p.message}`)).toEqual([]);
});

test("every API operation lists its 4xx answers (the rule redocly.yaml turns off for health and documentation)", () => {
  for (const [route, item] of Object.entries(doc.paths)) {
    if (!route.startsWith("/api/v1/") || route === "/api/v1/openapi.json") continue;
    for (const [method, operation] of Object.entries(item)) {
      expect([method, route, Object.keys(operation.responses).some((status) => status.startsWith("4"))]).toEqual([method, route, true]);
    }
  }
});

test("component names are letters and digits only: they become type names in generated clients", () => {
  const components = (doc as unknown as { components: { schemas: object } }).components.schemas;
  for (const name of Object.keys(components)) expect(name).toMatch(/^[A-Za-z][A-Za-z0-9]*$/);
});
