import type { Metrics } from "./create-metrics.ts";
import type { RepairKind } from "./metric-names.ts";

/** Counts `count` repairs of one kind by a reconciler run; zero still creates the series, so a rate reads 0, not absent. */
export function recordReconcilerRepairs(metrics: Metrics | undefined, kind: RepairKind, count: number): void {
  metrics?.reconcilerRepairs.inc({ kind }, count);
}
