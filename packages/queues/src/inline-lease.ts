import { randomBytes } from "node:crypto";
import type { RedisClient } from "./create-redis.ts";

/**
 * What stands in for the delivery lock of attempts a process runs inline (outside any BullMQ job):
 * one lease per process instead of one delayed "watchdog" job per attempt, which cost every attempt
 * an add and a remove (two round trips, a Lua script of BullMQ's each) and woke a delivery worker's
 * blocked fetch each time.
 *
 * Each process is an owner (a random id) with a deadline in the owners sorted set, renewed every
 * `leaseMs / LEASE_BEATS`; its attempts in flight are the members of its own set (an attempt's job id).
 * A registration is one SADD; the attempts finished since the last beat leave the set in one SREM,
 * in the same transaction as the renewal. The same transaction then runs the sweep: the owners whose
 * deadline passed (a process dead, or stalled for as long as a lock would lapse) are taken, each by
 * exactly one sweeper (one script: remove the owner, read and delete its set), and their attempts are
 * handed to `takeOver`, which runs each attempt's job now; the job path then sees what the attempt
 * left (unclaimed: runs it; open: `attempt_lost`; recorded: nothing). A process renews before it
 * sweeps, so it never takes its own attempts.
 */
export const LEASE_BEATS = 4;

// Owners swept per beat at most: the script blocks Redis while it runs; more wait for the next beat.
const MAX_OWNERS_PER_SWEEP = 16;

// KEYS[1] owners zset. ARGV: now ms, the attempt sets' key prefix (owner id follows), owners at most.
// The owners' sets are named from ARGV: under QUEUE_PREFIX, which is a hash tag on a cluster, so in
// the owners key's slot.
const SWEEP = `
local owners = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local taken = {}
for _, owner in ipairs(owners) do
  redis.call('ZREM', KEYS[1], owner)
  local key = ARGV[2] .. owner
  for _, attempt in ipairs(redis.call('SMEMBERS', key)) do taken[#taken + 1] = attempt end
  redis.call('DEL', key)
end
return taken`;

interface LeaseCommands {
  sweepInlineOwners(owners: string, now: number, attemptsPrefix: string, limit: number): Promise<string[]>;
}

export interface InlineLease {
  /** This process's owner id. */
  readonly owner: string;
  /** Puts an attempt (its job id) under this process's lease: one SADD. Rejects on Redis trouble. */
  register(attempt: string): Promise<void>;
  /** The attempt is recorded (or handed to its job): it leaves the set with the next beat's batch. */
  finished(attempt: string): void;
  /** Renews, unregisters the finished attempts and sweeps, now (the timer does it every `leaseMs / LEASE_BEATS`). */
  beat(): Promise<void>;
  /** Stops beating and drops the lease and its set: call once no attempt of this process runs. */
  close(): Promise<void>;
}

export interface InlineLeaseOptions {
  prefix: string;
  /** How long an owner's attempts are safe without a renewal: the delivery lock's duration. */
  leaseMs: number;
  /** Runs a taken-over attempt's job now. A rejection is retried at the next beat. */
  takeOver(attempt: string): Promise<unknown>;
  /** Redis trouble with a beat or a take-over (renewal, batch, sweep and take-over are tried again at the next). */
  onError(error: unknown): void;
}

/** Key names of the inline attempts' leases under `prefix`. */
export const inlineLeaseKeys = (prefix: string) => ({ owners: `${prefix}:inline-lease:owners`, attemptsPrefix: `${prefix}:inline-lease:attempts:` });

export function createInlineLease(redis: RedisClient, options: InlineLeaseOptions): InlineLease {
  const commands = redis as unknown as RedisClient & LeaseCommands;
  if (typeof commands.sweepInlineOwners !== "function") redis.defineCommand("sweepInlineOwners", { numberOfKeys: 1, lua: SWEEP });
  const owner = randomBytes(8).toString("hex");
  const keys = inlineLeaseKeys(options.prefix);
  const attempts = `${keys.attemptsPrefix}${owner}`;
  // Finished since the last beat; and those whose SREM a beat has in flight.
  let done = new Set<string>();
  let removing = new Set<string>();
  // Taken-over attempts whose job could not be added yet.
  let toTakeOver: string[] = [];
  let beating: Promise<void> | undefined;
  let closed = false;

  const beatOnce = async () => {
    const batch = (removing = done);
    done = new Set();
    const now = Date.now();
    const transaction = redis.multi().zadd(keys.owners, now + options.leaseMs, owner);
    if (batch.size > 0) transaction.srem(attempts, ...batch);
    (transaction as unknown as LeaseCommands).sweepInlineOwners(keys.owners, now, keys.attemptsPrefix, MAX_OWNERS_PER_SWEEP);
    let replies: [Error | null, unknown][] | null;
    try {
      replies = await transaction.exec();
    } catch (error) {
      requeue(batch);
      throw error;
    } finally {
      removing = new Set();
    }
    const failed = replies?.find(([error]) => error !== null)?.[0];
    if (!replies || failed) {
      requeue(batch);
      throw failed ?? new Error("inline lease beat: transaction aborted");
    }
    const taken = [...toTakeOver, ...(replies[replies.length - 1]![1] as string[])];
    toTakeOver = [];
    await Promise.all(
      taken.map((attempt) =>
        options.takeOver(attempt).catch((error: unknown) => {
          toTakeOver.push(attempt);
          options.onError(error);
        }),
      ),
    );
  };
  // A failed beat's removals wait for the next, except those registered again meanwhile (gone from the batch).
  const requeue = (batch: Set<string>) => {
    for (const attempt of batch) done.add(attempt);
  };
  // One beat at a time: on a stuck link a beat waits, and the next ones are skipped meanwhile.
  const beat = () =>
    (beating ??= beatOnce()
      .catch((error: unknown) => options.onError(error))
      .finally(() => (beating = undefined)));
  const timer = setInterval(() => void beat(), options.leaseMs / LEASE_BEATS);
  // A lease never keeps a process alive on its own.
  timer.unref();
  void beat();

  return {
    owner,
    async register(attempt) {
      // Registered again before its removal went out (a hand-off that gave its early registration
      // back, then runs or waits here after all): the removal must not take the new one off. One
      // already in a beat's transaction is sent before this SADD on the same connection, so it runs first.
      done.delete(attempt);
      removing.delete(attempt);
      await redis.sadd(attempts, attempt);
    },
    finished(attempt) {
      done.add(attempt);
    },
    beat,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await beating;
      await redis.multi().zrem(keys.owners, owner).del(attempts).exec();
    },
  };
}
