// Redis Cluster (3 masters, 3 replicas, started here on loopback): the whole chain, then under
// load a manual failover (CLUSTER FAILOVER on the replica) and a crash (SIGKILL of the master that
// then serves our slot), each followed by the cluster. Nothing may be lost or charged twice.
import { randomBytes } from "node:crypto";
import type { RedisConfig } from "@gen/config";
import { createDatabase } from "@gen/db";
import { newTaskId, newUserId } from "@gen/ids";
import { GENERATION_JOB_OPTIONS, QUEUE_NAMES, createQueue, createRedis, generationJobId, type GenerationJobData } from "@gen/queues";
import { reconcileTasks } from "../../apps/worker/src/reconcile-tasks.ts";
import { insertRows, insertUser } from "../support/db-rows.ts";
import { createScratchDatabase, type ScratchDatabase } from "../support/scratch-database.ts";
import { failWithAppOutput, startFaultStack, type FaultStack } from "../faults/support/fault-stack.ts";
import { describeWithReceiver, startHookReceiver, type HookReceiver } from "../faults/support/hook-receiver.ts";
import { failoverUnderLoad, printFailovers } from "./support/failover-under-load.ts";
import { startRedisCluster, waitHealthy, type RedisCluster } from "./support/redis-cluster.ts";
import { cli, waitFor } from "./support/redis-process.ts";
import { CHAIN_ENV, runWholeChain } from "./support/whole-chain.ts";

// CLUSTER_KILL_MASTER=0 leaves the crash out (the planned failover only), e.g. to tell a crash's
// trouble from a failover's. The crash once stopped the workers for good (a blocking connection's
// reconnect that never settled, see packages/queues/src/settle-cluster-connect.ts).
const KILL_MASTER = process.env.CLUSTER_KILL_MASTER !== "0";

let database: ScratchDatabase | undefined;
let cluster: RedisCluster | undefined;
let receiver: HookReceiver | undefined;
let stack: FaultStack | undefined;
const fail = (error: unknown): never => failWithAppOutput(stack, error);
const tag = `c${randomBytes(4).toString("hex")}`;

describeWithReceiver("on a Redis Cluster", () => {
  beforeAll(async () => {
    // The first POST of a `retry` webhook is refused, so its delivery goes through a retry.
    receiver = await startHookReceiver(({ nth, path }) => ({ status: nth === 0 && path.endsWith("&retry=1") ? 503 : 200 }));
    database = await createScratchDatabase();
    cluster = await startRedisCluster();
    stack = await startFaultStack({
      databaseUrl: database.url,
      // Ignored: REDIS_CLUSTER_NODES wins (the stack's clean-up reaches one node only; the cluster goes anyway).
      redisUrl: `redis://127.0.0.1:${cluster.ports[0]}`,
      env: { ...receiver.childEnv, ...CHAIN_ENV, REDIS_CLUSTER_NODES: cluster.nodesEnv, QUEUE_PREFIX: `{${tag}}`, WORKER_CONCURRENCY: "8" },
    });
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await cluster?.stop();
    await receiver?.close();
    await database?.drop();
  });

  const redis = (): RedisConfig => ({ mode: "cluster", nodes: cluster!.ports.map((port) => ({ host: "127.0.0.1", port })), password: undefined });
  let chainIds: string[] = [];

  test("whole chain: submit, generation, webhook with a retry, poll, rate limit, console sign-in", async () => {
    chainIds = await runWholeChain(stack!, receiver!, redis()).catch(fail);
  }, 120_000);

  test("the task reconciler lists the live jobs of a queue on the cluster, and re-enqueues only a task without one", async () => {
    // A database and a queue (under a hash tag) of their own, which the stack's apps never see.
    const own = await createScratchDatabase();
    const db = createDatabase(own.url);
    const connection = createRedis(redis(), "blocking");
    const queue = createQueue<GenerationJobData>(QUEUE_NAMES.generation, connection, `{${tag}r}`);
    try {
      const userId = newUserId();
      await insertUser(db, userId, 10);
      const [parked, stranded] = [newTaskId(), newTaskId()];
      await insertRows(
        db,
        "tasks",
        [parked, stranded].map((id) => ({
          id,
          userId,
          endpoint: "images",
          model: "sim-image-1",
          status: "queued",
          input: {},
          requestId: "req_x",
          billingMethod: "flat",
          reservedCredits: 1,
        })),
      );
      await queue.add("generate", { taskId: parked }, { ...GENERATION_JOB_OPTIONS, jobId: generationJobId(parked), delay: 600_000 });
      // A negative grace: the tasks just inserted count as stale.
      expect(await reconcileTasks(db, queue, -60_000)).toBe(1);
      expect(await queue.getJobState(generationJobId(parked))).toBe("delayed");
      expect(await queue.getJobState(generationJobId(stranded))).toBe("waiting");
    } finally {
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close();
      connection.disconnect();
      await db.$disconnect();
      await own.drop();
    }
  }, 60_000);

  test("failovers under load: nothing lost, nothing charged twice, ledger balanced", async () => {
    const outcome = await failoverUnderLoad(
      stack!,
      receiver!,
      [
        {
          name: "CLUSTER FAILOVER (replica promoted)",
          async run() {
            const { replica } = await cluster!.owner(`{${tag}}`);
            expect(await cli(replica.port, "CLUSTER", "FAILOVER")).toBe("OK");
            await waitFor(async () => (await cli(replica.port, "ROLE")).startsWith("master"), 60_000, "replica promoted");
          },
        },
        ...(KILL_MASTER
          ? [
              {
                name: "master SIGKILLed",
                async run() {
                  const { master, replica } = await cluster!.owner(`{${tag}}`);
                  await cluster!.process(master.port).kill();
                  await waitFor(async () => (await cli(replica.port, "ROLE")).startsWith("master"), 60_000, "replica took over");
                  // The killed node comes back (same node id, from its nodes.conf) as the new master's replica.
                  await cluster!.process(master.port).start();
                },
              },
            ]
          : []),
      ],
      chainIds,
    ).catch(fail);
    const { report } = outcome;
    expect(report.tasks).toBe(report.completed + report.failed + report.discarded);
    expect(report.webhooks).toBe(report.delivered + report.webhookFailed);
    printFailovers("Redis Cluster (3 masters + 3 replicas)", outcome);
    await waitHealthy(cluster!);
  }, 600_000);
});
