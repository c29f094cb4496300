// Fault: a fleet of 2 gateway processes and 3 worker processes on one database and one Redis
// prefix, under load from a client that spreads submissions over both gateways; SIGKILL of one
// gateway and one worker at the same moment, mid-load, with tasks running upstream and webhook POSTs
// in flight. Nothing accepted is lost, nothing is charged twice, and a keyed retry gets the original task.
import { randomBytes } from "node:crypto";
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { startFleet, type Fleet } from "./support/fleet.ts";
import { startFleetLoad } from "./support/fleet-client.ts";
import { describeWithReceiver, startHookReceiver, type HookReceiver } from "./support/hook-receiver.ts";
import { until } from "./support/load.ts";
import { expectNothingLost, summaryLine, waitSettled } from "./support/no-loss.ts";
import { findRows } from "../support/db-rows.ts";

// Tasks run 0.3-2.3 s upstream and the receiver holds each POST 0.3 s, so at any moment the fleet
// has generations running and deliveries in flight in every process.
const upstreamMs = (i: number) => 300 + (i % 5) * 500;
const HOLD_MS = 300;
const LOAD_AFTER_KILL_MS = 6_000;

let database: ScratchDatabase | undefined;
let receiver: HookReceiver | undefined;
let fleet: Fleet | undefined;
const fail = (error: unknown): never => {
  process.stderr.write(`app output:\n${fleet?.tails() ?? "(no fleet)"}\n`);
  throw error;
};

describeWithReceiver("fleet of 2 gateways and 3 workers, one of each SIGKILLed under load", () => {
  beforeAll(async () => {
    receiver = await startHookReceiver(() => ({ status: 200, delayMs: HOLD_MS }));
    database = await createScratchDatabase();
    fleet = await startFleet({
      gateways: 2,
      workers: 3,
      databaseUrl: database.url,
      redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
      env: { ...receiver.childEnv, WORKER_CONCURRENCY: "20", DELIVERY_CONCURRENCY: "20", WEBHOOK_HOST_CONCURRENCY: "60" },
    });
  }, 180_000);
  afterAll(async () => {
    await fleet?.close();
    await receiver?.close();
    await database?.drop();
  });

  test("every accepted task ends once, every webhook ends, keyed retries get the original task, the ledger adds up", async () => {
    const { stack, gateways } = fleet!;
    const { db } = stack;
    const { userId, auth } = await stack.user();
    const load = startFleetLoad({
      baseUrls: gateways.map((g) => g.baseUrl),
      auth,
      body: (i) => ({ model: "sim-detect-1", text: `fleet ${i} [[sim:delay_ms=${upstreamMs(i)}]]`, webhook_url: receiver!.url }),
      keyed: (i) => i % 2 === 0,
      replay: (i) => i % 6 === 0,
      keyPrefix: `fleet-${randomBytes(3).toString("hex")}`,
      lanes: 6,
      pauseMs: 40,
    });

    // Kill once the fleet is busy: tasks running upstream and POSTs held by the receiver.
    await until(
      async () => {
        const [row] = await db.$sql.rows<{ running: number }>`SELECT count(*)::int AS running FROM tasks WHERE status = 'in_progress'`;
        return load.accepted().length >= 60 && row!.running >= 5 && receiver!.inFlight() >= 2;
      },
      60_000,
      "a busy fleet",
    ).catch(async (error: unknown) => {
      await load.stop();
      return fail(error);
    });
    const acceptedBeforeKill = load.accepted().length;
    const inFlight = receiver!.inFlight();
    const killedAt = Date.now();
    const victimWorker = stack.workers[0]!;
    await Promise.all([gateways[1]!.process.kill("SIGKILL"), victimWorker.kill("SIGKILL")]);
    await new Promise((resolve) => setTimeout(resolve, LOAD_AFTER_KILL_MS));
    await load.stop();
    const firstAcceptedAfterKill = load.acceptedAt.find((at) => at > killedAt);
    await waitSettled(db, 120_000).catch(fail);
    const recoveredMs = Date.now() - killedAt;

    const accepted = load.accepted();
    const report = await expectNothingLost(db, receiver!, accepted).catch(fail);
    expect(accepted.length).toBeGreaterThan(acceptedBeforeKill);
    expect(report.completed).toBeGreaterThanOrEqual(accepted.length);

    // Idempotency across gateways: every 2xx for one key named the same task, the key's row names
    // it, and no keyed submission made a second visible task.
    const keyed = load.submissions.filter((s) => s.key !== undefined);
    expect(keyed.filter((s) => new Set(s.ids).size > 1).map((s) => `${s.key}: ${s.ids.join(",")}`)).toEqual([]);
    const keys = await findRows(db, "idempotency_keys", { userId });
    const keyTask = new Map(keys.map((k) => [k.key, k.taskId]));
    expect(keyed.filter((s) => s.outcome === "accepted" && keyTask.get(s.key!) !== s.ids[0]).map((s) => s.key)).toEqual([]);
    const visible = await db.$sql.rows<{ text: string; n: number }>`
      SELECT input->>'text' AS text, count(*)::int AS n FROM tasks WHERE discarded_at IS NULL GROUP BY 1 HAVING count(*) > 1`;
    const keyedTexts = new Set(keyed.map((s) => `fleet ${s.i} [[sim:delay_ms=${upstreamMs(s.i)}]]`));
    expect(visible.filter((row) => keyedTexts.has(row.text))).toEqual([]);

    // Every keyed submission ended accepted (a keyed client retries until it gets an answer).
    expect(keyed.filter((s) => s.outcome !== "accepted").map((s) => `${s.key}: ${s.outcome} ${s.detail}`)).toEqual([]);
    expect(load.submissions.filter((s) => s.outcome === "refused").map((s) => `${s.i}: ${s.detail}`)).toEqual([]);

    const retried = load.submissions.filter((s) => s.failures > 0);
    const replays = keyed.filter((s) => s.ids.length > 1).length;
    const unknown = load.submissions.filter((s) => s.outcome === "unknown").length;
    const extra =
      `submissions ${load.submissions.length} (keyed ${keyed.length}, accepted ${accepted.length}, ${acceptedBeforeKill} before the kill), ` +
      `retried after an error ${retried.length} (keyed ${retried.filter((s) => s.key).length}, of them after a lost answer ${retried.filter((s) => s.key && s.lostAnswers > 0).length}), deliberate keyed replays ${replays}, unkeyed with unknown outcome ${unknown}, ` +
      `first acceptance after the kill +${firstAcceptedAfterKill === undefined ? "none" : `${firstAcceptedAfterKill - killedAt} ms`}`;
    process.stdout.write(summaryLine(`SIGKILL 1 of 2 gateways and 1 of 3 workers (${inFlight} POSTs in flight)`, report, recoveredMs, extra));
  }, 280_000);
});
