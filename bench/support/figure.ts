export interface Figure {
  name: string;
  value: number;
  unit: string;
  baseline?: number;
  ratio?: number;
  target?: string;
  pass?: boolean;
  note?: string;
}

const fmt = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "" : n >= 100 ? n.toFixed(0) : n.toFixed(n >= 10 ? 1 : 2));

export function table(figures: Figure[]): string {
  const rows = figures.map((f) => [f.name, `${fmt(f.value)} ${f.unit}`, f.baseline === undefined ? "" : `${fmt(f.baseline)} ${f.unit}`, f.ratio === undefined ? "" : f.ratio.toFixed(2), f.target ?? "", f.pass === undefined ? "" : f.pass ? "pass" : "MISS"]);
  const head = ["figure", "value", "baseline", "ratio", "target", ""];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
