// What a transaction-mode pooler costs: the PostgreSQL statements of a poll (key lookup, then the
// task read, as the gateway's poll sends them) and of a submission (`insertTask`: debit, task and
// reserve row in one statement), through @gen/db, 32 in flight, three ways in the same run:
// directly with named prepared statements (the default), directly with every statement unnamed
// (`pgbouncer=true` switches them off), and through Debian's PgBouncer 1.18 in transaction mode
// with `pgbouncer=true` (what that version needs). CPU per operation of this process, of this
// database's PostgreSQL backends and of the pgbouncer process (from /proc), latency p50/p99, and
// ratios against the direct, named run. A scratch database, dropped at the end.
//
//   pnpm exec tsx --conditions=@gen/source bench/pooler-cost.ts     (POOLER_OPS=4000 per subject)
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createDatabase, findKeyByHash, findVisibleTasks, insertTask, type Database } from "@gen/db";
import { hashApiKey, newRequestId, newTaskId } from "@gen/ids";
import { createScratchDatabase } from "../test/support/scratch-database.ts";
import { pgbouncerVersion, startPgbouncer } from "../test/support/pgbouncer.ts";
import { REPO_ROOT } from "./support/child.ts";
import { postgresBackendsOf, sampleCpu } from "./support/proc-cpu.ts";

const LANES = 32;
const POOL = 10;
const COUNT = Number(process.env.POOLER_OPS ?? 4000);
const ROUNDS = 3;

process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/gen";
const database = await createScratchDatabase();
const databaseName = new URL(database.url).pathname.slice(1);
const bouncer = await startPgbouncer({ serverUrl: database.url, poolSize: POOL }).catch(async (error: unknown) => {
  await database.drop();
  throw error;
});

interface Row {
  subject: string;
  operation: string;
  per_second: number;
  client_ms: number;
  postgres_ms: number;
  pgbouncer_ms: number;
  p50_ms: number;
  p99_ms: number;
}

const unnamed = new URL(database.url);
unnamed.searchParams.set("pgbouncer", "true");
const subjects: { name: string; url: string; pooled: boolean }[] = [
  { name: "direct, named", url: database.url, pooled: false },
  { name: "direct, unnamed", url: unnamed.toString(), pooled: false },
  { name: "PgBouncer 1.18, unnamed", url: bouncer.urlFor(database.url), pooled: true },
];

const userId = "usr_bench_pooler";
const keyHash = hashApiKey("bench-pooler-key");
const setup = createDatabase(database.url, { max: 1 });
const rows: Row[] = [];
try {
  await setup.$sql.query("INSERT INTO users (id, credits) VALUES ($1, 2000000000)", [userId]);
  await setup.$sql.query("INSERT INTO api_keys (id, user_id, key_hash) VALUES ('key_bench_pooler', $1, $2)", [userId, keyHash]);
  const submit = (db: Database) =>
    insertTask(db, {
      id: newTaskId(),
      userId,
      endpoint: "images",
      model: "sim-image-1",
      input: { prompt: "a lighthouse at dusk", size: "512x512" },
      webhookUrl: null,
      requestId: newRequestId(),
      billingMethod: "flat",
      reserve: { kind: "reserve", amount: 4, delta: -4 },
    });
  const polled = await submit(setup);
  if (!polled || polled === "locked") throw new Error("the polled task was not written");
  const poll = async (db: Database) => {
    await findKeyByHash(db, keyHash);
    await findVisibleTasks(db, [polled.id]);
  };

  // Rounds rotate the subjects, so a neighbour's burst on this shared machine hits all of them.
  const totals = new Map<string, Row & { ops: number; wallMs: number; latencies: number[] }>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const subject of subjects) {
      const db = createDatabase(subject.url, { max: POOL });
      try {
        for (const [operation, run] of [
          ["poll statements", poll],
          ["submission statement", submit],
        ] as const) {
          await drive(() => run(db), 200);
          const stop = sampleCpu({ postgres: () => postgresBackendsOf(databaseName), pgbouncer: () => (subject.pooled ? [bouncer.pid] : []) });
          const before = process.cpuUsage();
          const latencies = await drive(() => run(db), Math.ceil(COUNT / ROUNDS));
          const client = process.cpuUsage(before);
          const sample = stop();
          const key = `${subject.name}|${operation}`;
          const total = totals.get(key) ?? {
            subject: subject.name,
            operation,
            per_second: 0,
            client_ms: 0,
            postgres_ms: 0,
            pgbouncer_ms: 0,
            p50_ms: 0,
            p99_ms: 0,
            ops: 0,
            wallMs: 0,
            latencies: [],
          };
          total.ops += latencies.length;
          total.wallMs += sample.wallMs;
          total.client_ms += (client.user + client.system) / 1000;
          total.postgres_ms += sample.ms.postgres!;
          total.pgbouncer_ms += sample.ms.pgbouncer!;
          total.latencies.push(...latencies);
          totals.set(key, total);
        }
      } finally {
        await db.$disconnect();
      }
    }
  }
  for (const t of totals.values()) {
    const sorted = t.latencies.sort((a, b) => a - b);
    rows.push({
      subject: t.subject,
      operation: t.operation,
      per_second: (t.ops / t.wallMs) * 1000,
      client_ms: t.client_ms / t.ops,
      postgres_ms: t.postgres_ms / t.ops,
      pgbouncer_ms: t.pgbouncer_ms / t.ops,
      p50_ms: sorted[Math.floor(sorted.length * 0.5)]!,
      p99_ms: sorted[Math.floor(sorted.length * 0.99)]!,
    });
  }
} finally {
  await setup.$disconnect();
  await bouncer.stop();
  await database.drop();
}

/** `count` calls of `run`, LANES at a time; each call's milliseconds. */
async function drive(run: () => Promise<unknown>, count: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      while (next++ < count) {
        const started = performance.now();
        await run();
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

const f = (n: number, digits = 3) => n.toFixed(digits);
const header = ["subject", "operation", "per s", "client ms", "pg ms", "pgbouncer ms", "p50 ms", "p99 ms", "CPU ratio", "p50 ratio"];
const lines = rows.map((r) => {
  const base = rows.find((b) => b.subject === subjects[0]!.name && b.operation === r.operation)!;
  const cpu = (x: Row) => x.client_ms + x.postgres_ms + x.pgbouncer_ms;
  return [
    r.subject,
    r.operation,
    f(r.per_second, 0),
    f(r.client_ms),
    f(r.postgres_ms),
    f(r.pgbouncer_ms),
    f(r.p50_ms, 2),
    f(r.p99_ms, 2),
    f(cpu(r) / cpu(base), 2),
    f(r.p50_ms / base.p50_ms, 2),
  ];
});
const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
const print = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
process.stdout.write(`\n${print(header)}\n${lines.map(print).join("\n")}\n`);
process.stdout.write(
  `\n${pgbouncerVersion()}; ${LANES} in flight, pool of ${POOL} (PgBouncer: ${POOL} server connections); ratios: (client + pg + pgbouncer CPU) and p50 against "${subjects[0]!.name}"\n`,
);
const dir = path.join(REPO_ROOT, "bench/results");
mkdirSync(dir, { recursive: true });
writeFileSync(
  path.join(dir, "pooler-cost.json"),
  `${JSON.stringify({ date: new Date().toISOString(), pgbouncer: pgbouncerVersion(), lanes: LANES, rows }, null, 2)}\n`,
);
process.exit(0);
