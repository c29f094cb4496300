// `pnpm exec tsx --conditions=@gen/source bench/validation-cost.ts`: CPU per request of the gateway's body handling (the shape scan,
// JSON.parse, then the submission checks up to pricing) for the worst shapes of a body under 1 MiB, and
// for an ordinary body. In-process, no database: what the event loop is held for before the first
// await. Prints one line per shape: the answer, median and worst over the runs.
import { loadCatalog } from "@gen/catalog";
import { ApiError } from "@gen/errors";
// The gateway's own functions, measured in-process: nothing here is shared code.
// eslint-disable-next-line no-restricted-imports
import { jsonShapeProblem, startsAsObject } from "../apps/gateway/src/http/json-shape.ts";
// eslint-disable-next-line no-restricted-imports
import { priceSubmission, validateSubmission } from "../apps/gateway/src/services/validate-submission.ts";
import { HOSTILE_BODIES } from "../test/faults/support/hostile-bodies.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const catalog = loadCatalog();

/** What apps/gateway/src/middleware/json-body.ts and submit-task.ts do before the first await. */
function handle(endpoint: (typeof HOSTILE_BODIES)[number]["endpoint"], raw: Buffer): string {
  const text = raw.toString("utf8");
  if (jsonShapeProblem(text) !== null) return startsAsObject(text) ? "400/20003" : "400/20001";
  const body = JSON.parse(text) as Record<string, unknown>;
  try {
    priceSubmission(catalog, validateSubmission(catalog, endpoint, body));
    return "202";
  } catch (error) {
    if (error instanceof ApiError) return `400/${error.code}`;
    throw error;
  }
}

function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const ordinary = {
  name: "ordinary images body",
  endpoint: "images" as const,
  body: JSON.stringify({ model: "sim-image-1", prompt: "a lighthouse at dusk", n: 2, size: "512x512" }),
  expect: "202",
};
const rows: string[] = [];
let worst = 0;
for (const shape of [ordinary, ...HOSTILE_BODIES]) {
  const raw = Buffer.from(shape.body);
  let answer = "";
  const parse: number[] = [];
  const scan: number[] = [];
  const total: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    parse.push(cpuMs(() => JSON.parse(raw.toString("utf8"))));
    const text = raw.toString("utf8");
    scan.push(cpuMs(() => jsonShapeProblem(text)));
    total.push(cpuMs(() => (answer = handle(shape.endpoint, raw))));
  }
  const line = `${shape.name.padEnd(48)} ${(raw.length / 1024).toFixed(0).padStart(5)} KiB  ${answer.padEnd(9)}${answer === shape.expect ? "" : ` (expected ${shape.expect})`}  JSON.parse alone ${median(parse).toFixed(2).padStart(7)} ms, scan ${median(scan).toFixed(2).padStart(5)} ms;  gateway median ${median(total).toFixed(2).padStart(7)} ms, worst ${Math.max(
    ...total,
  )
    .toFixed(2)
    .padStart(7)} ms`;
  rows.push(line);
  if (shape !== ordinary) worst = Math.max(worst, median(total));
  process.stdout.write(`${line}\n`);
}
process.stdout.write(`\nworst shape: ${worst.toFixed(2)} ms CPU per request (median of ${RUNS} runs), node ${process.version}\n`);

// The ordinary body many times over: the hot path's cost per request.
const raw = Buffer.from(ordinary.body);
const n = 20_000;
const micro = cpuMs(() => {
  for (let i = 0; i < n; i++) handle("images", raw);
});
process.stdout.write(`ordinary body: ${((micro * 1000) / n).toFixed(1)} µs CPU per request over ${n}\n`);
