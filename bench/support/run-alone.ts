import { measureBarePostCpu } from "./bare-post-unit.ts";
import { table, withUnits, type Figure } from "./figure.ts";

/**
 * A figure script run on its own (not through run.ts): its own bare-POST unit first, then its
 * figures, printed as `pnpm bench` prints them, and the process ends.
 */
export async function runAlone(measure: (options: { quick: boolean }) => Promise<Figure[]>): Promise<never> {
  const bare = await measureBarePostCpu();
  const figures = withUnits(await measure({ quick: process.env.BENCH_QUICK === "1" }), bare);
  process.stdout.write(`${table(figures)}\n\nunit: bare Express POST ${bare.toFixed(3)} ms of its process's CPU\n`);
  for (const f of figures) if (f.note) process.stdout.write(`- ${f.name}: ${f.note}\n`);
  process.exit(0);
}
