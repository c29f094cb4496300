import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

// A cluster needs every key of a deployment in one slot: each app refuses to start without a
// hash-tagged QUEUE_PREFIX, in one line, before connecting anywhere (the nodes here do not exist).
test.each([
  [
    "gateway",
    { REDIS_CLUSTER_NODES: "127.0.0.1:1,127.0.0.1:2", QUEUE_PREFIX: "gen" },
    /^gateway: QUEUE_PREFIX must be a Redis hash tag such as \{gen\} when REDIS_CLUSTER_NODES is set .*got "gen"$/,
  ],
  [
    "worker",
    { REDIS_CLUSTER_NODES: "127.0.0.1:1", QUEUE_PREFIX: "gen{x}" },
    /^worker: QUEUE_PREFIX must be a Redis hash tag such as \{gen\} when REDIS_CLUSTER_NODES is set .*got "gen\{x\}"$/,
  ],
  ["gateway", { REDIS_SENTINELS: "127.0.0.1:1" }, /^gateway: REDIS_SENTINEL_NAME \(the master group name\) is required when REDIS_SENTINELS is set$/],
  [
    "worker",
    { REDIS_SENTINELS: "127.0.0.1", REDIS_SENTINEL_NAME: "m" },
    /^worker: REDIS_SENTINELS must be a comma-separated list of host:port, got "127\.0\.0\.1"$/,
  ],
])(
  "%s refuses %p with one line and exit status 1",
  async (app, broken, pattern) => {
    const result = await run(process.execPath, ["--conditions=@gen/source", "--import", "tsx", `apps/${app}/src/main.ts`], {
      env: { ...process.env, NODE_OPTIONS: "", LOG_LEVEL: "silent", ...broken },
      timeout: 30_000,
    }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
  },
  40_000,
);
