import { escapeHtml } from "../console-ui.ts";
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

/**
 * Stacked bars of attempts per minute by outcome, as inline SVG (no script, no styles: colours are
 * attributes, so a strict Content-Security-Policy does not get in the way), with a <title> tooltip
 * on every segment, a legend, and the numbers as a table for screen readers and copying.
 */
export function renderStatsChart(stats: DeliveryStats, jsonHref: string): string {
  const perMinute = stats.minutes.map((entry) => total(entry.outcomes));
  const yMax = niceCeiling(Math.max(0, ...perMinute));
  const slot = PLOT_W / stats.minutes.length;
  const barWidth = Math.max(1, slot - 2);
  const present = OUTCOME_CATEGORIES.filter((category) => (stats.totals[category.name] ?? 0) > 0);
  const summary = present.length === 0 ? "No attempts finished in this hour." : `Totals: ${present.map((category) => `${category.name} ${stats.totals[category.name]}`).join(", ")}.`;

  const bars: string[] = [];
  stats.minutes.forEach((entry, index) => {
    const x = LEFT + index * slot + 1;
    const minuteTotal = perMinute[index]!;
    let y = TOP + PLOT_H;
    for (const category of OUTCOME_CATEGORIES) {
      const count = entry.outcomes[category.name] ?? 0;
      if (count === 0) continue;
      const height = (count / yMax) * PLOT_H;
      y -= height;
      bars.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${height.toFixed(1)}" fill="${category.colour}" data-minute="${entry.minute}" data-outcome="${category.name}" data-count="${count}">` +
          `<title>${hhmm(entry.minute)} UTC: ${category.name} ${count} of ${minuteTotal}</title></rect>`,
      );
    }
  });

  const grid = [0, yMax / 2, yMax]
    .filter((value, index, all) => all.indexOf(value) === index && Number.isInteger(value))
    .map((value) => {
      const y = TOP + PLOT_H - (value / yMax) * PLOT_H;
      return `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="currentColor" stroke-opacity="0.15"/><text x="${LEFT - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="currentColor">${value}</text>`;
    });
  const ticks = stats.minutes
    .map((entry, index) => ({ entry, index }))
    .filter(({ index }) => index % 10 === 0 || index === stats.minutes.length - 1)
    .map(({ entry, index }) => `<text x="${(LEFT + index * slot + slot / 2).toFixed(1)}" y="${AXIS_Y}" text-anchor="middle" font-size="11" fill="currentColor">${hhmm(entry.minute)}</text>`);
  const empty = present.length === 0 ? `<text x="${LEFT + PLOT_W / 2}" y="${TOP + PLOT_H / 2}" text-anchor="middle" font-size="13" fill="currentColor" fill-opacity="0.7">No attempts finished in the last hour</text>` : "";

  const legend = legendRows(present.map((category) => ({ ...category, label: `${category.name} (${stats.totals[category.name]})` })));
  const height = AXIS_Y + 10 + legend.rows * LEGEND_ROW;
  const svg =
    `<svg id="deliveries-chart" data-testid="deliveries-chart" role="img" aria-labelledby="chart-title chart-desc" viewBox="0 0 ${WIDTH} ${height}" width="100%" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">` +
    `<title id="chart-title">Webhook attempts per minute by outcome, ${hhmm(stats.from)} to ${hhmm(stats.to)} UTC</title>` +
    `<desc id="chart-desc">${escapeHtml(summary)}</desc>` +
    grid.join("") +
    bars.join("") +
    `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H}" stroke="currentColor" stroke-opacity="0.5"/>` +
    ticks.join("") +
    empty +
    legend.svg +
    `</svg>`;

  const rows = stats.minutes
    .filter((_, index) => perMinute[index]! > 0)
    .map((entry) => `<tr><th scope="row">${hhmm(entry.minute)}</th>${present.map((category) => `<td>${entry.outcomes[category.name] ?? 0}</td>`).join("")}<td>${total(entry.outcomes)}</td></tr>`);
  const table =
    rows.length === 0
      ? ""
      : `<details><summary>Numbers per minute</summary><table id="stats-table"><thead><tr><th scope="col">Minute (UTC)</th>${present.map((category) => `<th scope="col">${category.name}</th>`).join("")}<th scope="col">total</th></tr></thead><tbody>${rows.join("")}</tbody></table></details>`;

  return `<figure id="deliveries-stats">${svg}<figcaption>${escapeHtml(summary)} Times in UTC; <a href="${escapeHtml(jsonHref)}">the same data as JSON</a>.</figcaption>${table}</figure>`;
}

/**
 * The legend inside the SVG, swatch and label per outcome, wrapped into rows: drawn rather than
 * styled, because the console's CSP allows no inline styles and the layout is not ours to change.
 */
function legendRows(items: Array<{ name: string; colour: string; label: string }>): { svg: string; rows: number } {
  if (items.length === 0) return { svg: "", rows: 0 };
  const parts: string[] = [];
  let x = LEFT;
  let row = 0;
  for (const item of items) {
    // Roughly 7 px per character at 12 px: enough to keep labels apart without measuring text.
    const width = 12 + 6 + item.label.length * 7 + 18;
    if (x + width > WIDTH - RIGHT && x > LEFT) {
      x = LEFT;
      row++;
    }
    const y = AXIS_Y + 12 + row * LEGEND_ROW;
    parts.push(`<g data-outcome="${item.name}"><rect x="${x}" y="${y}" width="12" height="12" fill="${item.colour}"/><text x="${x + 18}" y="${y + 11}" font-size="12" fill="currentColor">${escapeHtml(item.label)}</text></g>`);
    x += width;
  }
  return { svg: `<g id="chart-legend">${parts.join("")}</g>`, rows: row + 1 };
}
