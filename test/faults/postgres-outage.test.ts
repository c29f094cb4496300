// Fault: PostgreSQL is stopped (pg_ctl stop -m fast) for 10 s under steady load, then started
// again. The apps are not restarted: the gateway must answer 70002 quickly while it is gone, and
// both apps must serve again on their own once it is back. Twice: connected directly, and through
// PgBouncer in transaction mode (`pgbouncer=true`), which stays up while the server is gone.
import { isTerminalTask, type TaskStatus } from "@gen/domain";
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { failWithAppOutput, startFaultStack, type FaultStack } from "./support/fault-stack.ts";
import { describeWithReceiver, startHookReceiver, type HookReceiver } from "./support/hook-receiver.ts";
import { startLoad, until, type Sample } from "./support/load.ts";
import { expectNothingLost, summaryLine, waitSettled } from "./support/no-loss.ts";
import { startPrivatePostgres, type PrivatePostgres } from "./support/private-postgres.ts";
import { startPgbouncer, type Pgbouncer } from "../support/pgbouncer.ts";
import { readDelivery } from "@gen/db";

const OUTAGE_MS = 10_000;
// The pool's connect time-out is 1 s (packages/db); an answer takes that plus a little at most.
const MAX_ANSWER_MS = 2500;

const scenario = (title: string, pooled: boolean) =>
  describeWithReceiver(title, () => {
    let postgres: PrivatePostgres | undefined;
    let database: ScratchDatabase | undefined;
    let bouncer: Pgbouncer | undefined;
    let receiver: HookReceiver | undefined;
    let stack: FaultStack | undefined;
    const fail = (error: unknown): never => {
      if (bouncer) process.stderr.write(`${bouncer.tail()}\n`);
      return failWithAppOutput(stack, error);
    };

    beforeAll(async () => {
      receiver = await startHookReceiver();
      postgres = await startPrivatePostgres();
      database = await createScratchDatabase(postgres.url);
      if (pooled) bouncer = await startPgbouncer({ serverUrl: postgres.url });
      const databaseUrl = bouncer ? bouncer.urlFor(database.url) : database.url;
      stack = await startFaultStack({ databaseUrl, redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", env: receiver.childEnv });
    });
    afterAll(async () => {
      await stack?.close();
      await receiver?.close();
      await bouncer?.stop();
      await postgres?.destroy();
    });

    test("70002 within the bound while it is down; both apps recover without a restart; nothing lost", async () => {
      const { db } = stack!;
      const { auth } = await stack!.user();
      const pids = [stack!.gateway.child.pid, stack!.workers[0]!.child.pid];
      const load = startLoad(stack!, auth, (i) => ({ model: "sim-detect-1", text: `load ${i} [[sim:delay_ms=${(i % 5) * 500}]]`, webhook_url: receiver!.url }));

      await new Promise((resolve) => setTimeout(resolve, 3000));
      await postgres!.stop();
      const downAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      const upAt = Date.now();
      await postgres!.start();
      // The gateway serves again: a submission is accepted after the restart.
      const servedAt = await until(
        async () => load.samples.find((s) => s.kind === "submit" && s.startedAt >= upAt && s.status < 300)?.startedAt,
        30_000,
        "a submission accepted after the restart",
      ).catch(fail);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await load.stop();

      // Every answer that is not a success is 70002, including requests cut by the stop itself.
      expect(load.samples.filter((s) => s.status >= 300 || s.status === 0).filter((s) => s.status !== 503 || s.code !== 70002)).toEqual([]);
      const during = load.samples.filter((s) => s.startedAt >= downAt && s.startedAt + s.ms <= upAt);
      expect(during.length).toBeGreaterThan(10);
      // A finished task's answer can never change, so the gateway serves it from memory
      // (docs/internals.md "Caches in the gateway") with PostgreSQL down too; everything else is 503.
      expect(during.filter((s) => s.status !== 503 && !(s.kind === "get" && s.status === 200 && isTerminalTask(s.taskStatus as TaskStatus)))).toEqual([]);
      const slowest = Math.max(...load.samples.filter((s) => s.startedAt >= downAt && s.startedAt < upAt).map((s) => s.ms));
      expect(slowest).toBeLessThan(MAX_ANSWER_MS);

      const lastSubmitted = load.accepted.at(-1)!;
      await waitSettled(db, 90_000).catch(fail);
      const recoveredMs = Date.now() - upAt;
      // The worker too: the last task accepted after the restart was run and its webhook delivered.
      expect((await readDelivery(db, lastSubmitted))!.status).toBe("delivered");
      expect([stack!.gateway.child.pid, stack!.workers[0]?.child.pid]).toEqual(pids);
      expect([stack!.gateway.child.exitCode, stack!.workers[0]!.child.exitCode]).toEqual([null, null]);

      const report = await expectNothingLost(db, receiver!, load.accepted).catch(fail);
      const answers = `outage answers ${during.length} x 70002 (slowest ${slowest} ms, median ${median(during)} ms), gateway accepting again ${((servedAt - upAt) / 1000).toFixed(1)} s after start`;
      process.stdout.write(summaryLine(`${title}`, report, recoveredMs, answers));
    }, 150_000);
  });

scenario(`PostgreSQL stopped for ${OUTAGE_MS / 1000} s under load`, false);
scenario(`PostgreSQL behind PgBouncer (transaction mode) stopped for ${OUTAGE_MS / 1000} s under load`, true);

function median(samples: Sample[]): number {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
