import type { Cluster } from "ioredis";

/**
 * Makes `cluster.connect()` (and its duplicates', such as BullMQ's blocking connections) settle:
 * resolved once the cluster is ready, rejected if it ends, whichever attempt gets it there.
 *
 * ioredis leaves the promise of `Cluster#connect()` pending for ever when its ready check fails
 * after the slots were loaded: it then reconnects on its own (and usually becomes ready a moment
 * later), but that attempt's promise is never resolved nor rejected (redis/ioredis#741, open; the
 * maintainers' advice is to watch the events instead). Right after a master is killed this is
 * common: the check (CLUSTER INFO) lands on the dead node or on a node that still sees the cluster
 * down. BullMQ re-creates a worker's blocking connection when a BZPOPMIN goes
 * unanswered (as it does while the slot's master is gone), by disconnect + `connect()`; waiting on
 * that promise, the worker stopped taking jobs for good while the queue kept filling.
 */
export function settleClusterConnect(cluster: Cluster): Cluster {
  const { connect, duplicate } = cluster;
  cluster.connect = function (this: Cluster) {
    const attempt = connect.call(this);
    return new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        this.off("ready", onReady);
        this.off("end", onEnd);
        if (error) reject(error);
        else resolve();
      };
      const onReady = () => done();
      // ioredis' own words for a closed connection, which BullMQ treats as "wait and retry".
      const onEnd = () => done(new Error("Connection is closed."));
      this.once("ready", onReady);
      this.once("end", onEnd);
      attempt.then(
        () => done(),
        (error: Error) => done(error),
      );
    });
  };
  cluster.duplicate = function (this: Cluster, ...args: Parameters<Cluster["duplicate"]>) {
    const copy = duplicate.apply(this, args);
    copy.on("error", () => {});
    return settleClusterConnect(copy);
  };
  return cluster;
}
