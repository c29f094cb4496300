import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { METRIC_NAMES } from "@gen/metrics";

// The alert rules and the dashboard ship in docker/observability/; promtool (Debian's prometheus
// package, scripts/install-promtool.sh) checks the rules and runs their unit tests.
const DIR = new URL("../../docker/observability/", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, DIR), "utf8");
const run = promisify(execFile);
const PROMTOOL = process.env.PROMTOOL_PATH ?? "promtool";
// The prefix the shipped rules are written for: METRICS_PREFIX's default.
const PREFIX = "gen_";

const rules = read("alerts.yml");
const alertNames = [...rules.matchAll(/^\s*- alert: (\w+)$/gm)].map((m) => m[1]!);

async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(PROMTOOL, args, { cwd: DIR.pathname });
    return stdout + stderr;
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (failed.code === "ENOENT") throw new Error(`${PROMTOOL} not found: run scripts/install-promtool.sh (Debian's prometheus package)`, { cause: error });
    throw new Error(`promtool ${args.join(" ")} failed:\n${failed.stdout ?? ""}${failed.stderr ?? ""}`, { cause: error });
  }
}

test("promtool accepts the alert rules", async () => {
  expect(await promtool("check", "rules", "alerts.yml")).toContain(`SUCCESS: ${alertNames.length} rules found`);
});

test("every alert's promtool unit tests pass", async () => {
  expect(await promtool("test", "rules", "alerts.test.yml")).toContain("SUCCESS");
});

test("every alert has a unit test that expects it to fire", () => {
  const tests = read("alerts.test.yml");
  for (const name of alertNames) expect(tests).toMatch(new RegExp(`alertname: ${name}\\n\\s+exp_alerts:\\n\\s+- exp_labels`));
});

test("every alert links to its own section of docs/runbooks.md", () => {
  const runbooks = readFileSync(new URL("../../docs/runbooks.md", import.meta.url), "utf8");
  const anchors = new Set([...runbooks.matchAll(/^#{2,3} (.+)$/gm)].map((m) => githubAnchor(m[1]!)));
  const links = [...rules.matchAll(/runbook_url: docs\/runbooks\.md#([\w-]+)$/gm)].map((m) => m[1]!);
  expect(links).toEqual(alertNames.map((name) => name.toLowerCase()));
  for (const link of links) expect(anchors).toContain(link);
});

test("the rules and the dashboard name only metrics the services export", () => {
  const dashboard = read("grafana/dashboards/task-gateway.json");
  const parsed = JSON.parse(dashboard) as { templating: { list: { name: string; query: string }[] } };
  expect(parsed.templating.list).toContainEqual(expect.objectContaining({ name: "prefix", query: PREFIX }));
  const known = new Set(Object.values(METRIC_NAMES).flatMap((name) => [name, `${name}_bucket`, `${name}_count`, `${name}_sum`]));
  const used = [...[...rules.matchAll(/\bgen_(\w+)/g)].map((m) => m[1]!), ...[...dashboard.matchAll(/\$\{prefix\}(\w+)/g)].map((m) => m[1]!)];
  expect(used.length).toBeGreaterThan(20);
  expect(used.filter((name) => !known.has(name))).toEqual([]);
  // The dashboard reads the Prometheus data source the compose profile provisions.
  expect(read("grafana/provisioning/datasources/prometheus.yml")).toContain("uid: prometheus");
  expect(new Set([...dashboard.matchAll(/"uid": "([^"]+)"/g)].map((m) => m[1]))).toEqual(new Set(["prometheus", "gen-task-gateway"]));
});

/** The anchor GitHub gives a Markdown heading. */
function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, "")
    .replace(/ /g, "-");
}
