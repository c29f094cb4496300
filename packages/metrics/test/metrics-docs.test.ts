import { readFileSync } from "node:fs";
import { metricsTable } from "../src/index.ts";

// docs/metrics.md carries the table made from the metric definitions, between two markers; when a
// metric changes, paste the table this test prints.
test("docs/metrics.md lists every metric as the registry defines it", () => {
  const docs = readFileSync(new URL("../../../docs/metrics.md", import.meta.url), "utf8");
  const table = /<!-- metrics-table -->\n([\s\S]*?)\n<!-- \/metrics-table -->/.exec(docs)?.[1];
  expect(table).toBe(metricsTable("gen_"));
});
