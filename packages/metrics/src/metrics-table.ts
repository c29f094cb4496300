import { METRIC_DEFINITIONS } from "./metric-names.ts";

/**
 * The Markdown table of every metric, as docs/metrics.md carries it (a test compares the two):
 * names with `prefix` (the METRICS_PREFIX default in the docs), type, labels, exporter, meaning.
 */
export function metricsTable(prefix: string): string {
  const rows = Object.values(METRIC_DEFINITIONS).map((d) => {
    const labels = d.labels.length === 0 ? "none" : d.labels.map((label) => `\`${label}\``).join(", ");
    return `| \`${prefix}${d.name}\` | ${d.type} | ${labels} | ${d.exportedBy} | ${d.help.replaceAll("|", "\\|")} |`;
  });
  return ["| Metric | Type | Labels | Exported by | Meaning |", "|---|---|---|---|---|", ...rows].join("\n");
}
