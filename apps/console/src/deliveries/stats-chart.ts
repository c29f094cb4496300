import type { DeliveryStats } from "./delivery-stats.ts";
import { OUTCOME_CATEGORIES } from "./outcome-category.ts";

const WIDTH = 760;
const LEFT = 44;
const RIGHT = 8;
const TOP = 10;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = 200;
/** Where the x-axis labels sit; the legend rows start below them. */
const AXIS_Y = TOP + PLOT_H + 18;
const LEGEND_ROW = 20;

const hhmm = (iso: string) => iso.slice(11, 16);
const total = (outcomes: Record<string, number | undefined>) => Object.values(outcomes).reduce<number>((sum, n) => sum + (n ?? 0), 0);

/** 1, 2, 5, 10, 20, 50, ...: the smallest such value at or above `n`, so the axis reads easily. */
function niceCeiling(n: number): number {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 5, 10]) if (step * power >= n) return step * power;
  return 10 * power;
}

interface LegendItem {
  name: string;
  colour: string;
  label: string;
  x: number;
  y: number;
}

/** What views/deliveries/stats-chart.eta draws: every coordinate worked out here, the markup there. */
export interface StatsChartView {
  width: number;
  height: number;
  left: number;
  right: number;
  baseline: number;
  axisY: number;
  from: string;
  to: string;
  summary: string;
  jsonHref: string;
  grid: Array<{ y: string; labelY: string; value: number }>;
  bars: Array<{ x: string; y: string; width: string; height: string; colour: string; minute: string; outcome: string; count: number; title: string }>;
  ticks: Array<{ x: string; label: string }>;
  empty: { x: number; y: number } | null;
  legend: LegendItem[];
  table: { columns: string[]; rows: Array<{ minute: string; counts: number[]; total: number }> };
}

/**
 * Stacked bars of attempts per minute by outcome, as inline SVG, with a <title> tooltip on every
 * segment, a legend, and the numbers as a table for screen readers and copying.
 */
export function statsChart(stats: DeliveryStats, jsonHref: string): StatsChartView {
  const perMinute = stats.minutes.map((entry) => total(entry.outcomes));
  const yMax = niceCeiling(Math.max(0, ...perMinute));
  const slot = PLOT_W / stats.minutes.length;
  const barWidth = Math.max(1, slot - 2);
  const present = OUTCOME_CATEGORIES.filter((category) => (stats.totals[category.name] ?? 0) > 0);
  const summary =
    present.length === 0
      ? "No attempts finished in this hour."
      : `Totals: ${present.map((category) => `${category.name} ${stats.totals[category.name]}`).join(", ")}.`;

  const bars: StatsChartView["bars"] = [];
  stats.minutes.forEach((entry, index) => {
    const x = LEFT + index * slot + 1;
    const minuteTotal = perMinute[index]!;
    let y = TOP + PLOT_H;
    for (const category of OUTCOME_CATEGORIES) {
      const count = entry.outcomes[category.name] ?? 0;
      if (count === 0) continue;
      const height = (count / yMax) * PLOT_H;
      y -= height;
      bars.push({
        x: x.toFixed(1),
        y: y.toFixed(1),
        width: barWidth.toFixed(1),
        height: height.toFixed(1),
        colour: category.colour,
        minute: entry.minute,
        outcome: category.name,
        count,
        title: `${hhmm(entry.minute)} UTC: ${category.name} ${count} of ${minuteTotal}`,
      });
    }
  });

  const grid = [0, yMax / 2, yMax]
    .filter((value, index, all) => all.indexOf(value) === index && Number.isInteger(value))
    .map((value) => {
      const y = TOP + PLOT_H - (value / yMax) * PLOT_H;
      return { y: y.toFixed(1), labelY: (y + 4).toFixed(1), value };
    });
  const ticks = stats.minutes
    .map((entry, index) => ({ entry, index }))
    .filter(({ index }) => index % 10 === 0 || index === stats.minutes.length - 1)
    .map(({ entry, index }) => ({ x: (LEFT + index * slot + slot / 2).toFixed(1), label: hhmm(entry.minute) }));

  const legend = legendItems(present.map((category) => ({ ...category, label: `${category.name} (${stats.totals[category.name]})` })));
  const legendRows = legend.length === 0 ? 0 : Math.max(...legend.map((item) => item.y - (AXIS_Y + 12))) / LEGEND_ROW + 1;
  return {
    width: WIDTH,
    height: AXIS_Y + 10 + legendRows * LEGEND_ROW,
    left: LEFT,
    right: WIDTH - RIGHT,
    baseline: TOP + PLOT_H,
    axisY: AXIS_Y,
    from: hhmm(stats.from),
    to: hhmm(stats.to),
    summary,
    jsonHref,
    grid,
    bars,
    ticks,
    empty: present.length === 0 ? { x: LEFT + PLOT_W / 2, y: TOP + PLOT_H / 2 } : null,
    legend,
    table: {
      columns: present.map((category) => category.name),
      rows: stats.minutes
        .filter((_, index) => perMinute[index]! > 0)
        .map((entry) => ({ minute: hhmm(entry.minute), counts: present.map((category) => entry.outcomes[category.name] ?? 0), total: total(entry.outcomes) })),
    },
  };
}

/**
 * The legend inside the SVG, swatch and label per outcome, wrapped into rows: drawn rather than
 * styled, because the console's CSP allows no inline styles and the layout is not ours to change.
 */
function legendItems(items: Array<{ name: string; colour: string; label: string }>): LegendItem[] {
  const placed: LegendItem[] = [];
  let x = LEFT;
  let row = 0;
  for (const item of items) {
    // Roughly 7 px per character at 12 px: enough to keep labels apart without measuring text.
    const width = 12 + 6 + item.label.length * 7 + 18;
    if (x + width > WIDTH - RIGHT && x > LEFT) {
      x = LEFT;
      row++;
    }
    placed.push({ ...item, x, y: AXIS_Y + 12 + row * LEGEND_ROW });
    x += width;
  }
  return placed;
}
