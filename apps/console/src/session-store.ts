import { createHash } from "node:crypto";
import RedisStore from "connect-redis";
import type { SessionData } from "express-session";
import type { RedisClient as Redis } from "@gen/queues";
import type { ConsoleConfig } from "@gen/config";

const hashId = (sid: string) => createHash("sha256").update(sid).digest("hex");

/**
 * connect-redis over the deployment's ioredis connection (from @gen/queues' createRedis, so it
 * follows whatever Redis mode that factory connects to), with two changes of ours: Redis holds only
 * the SHA-256 of each session id, so a Redis dump cannot be replayed as a cookie; and a session's
 * time to live is its idle time, cut short by what is left of its maximum life since sign-in.
 */
export class HashedIdRedisStore extends RedisStore {
  constructor(redis: Redis, prefix: string, config: ConsoleConfig) {
    super({
      client: redis,
      prefix: `${prefix}:console:session:`,
      // Seconds, as connect-redis sets them (EX); a session never lives past its maximum life.
      ttl: (session: SessionData) => {
        const left = (session.createdAt ?? Date.now()) + config.sessionMaxMs - Date.now();
        return Math.max(1, Math.ceil(Math.min(config.sessionIdleMs, left) / 1000));
      },
    });
  }

  override get(sid: string, cb?: Parameters<RedisStore["get"]>[1]) {
    return super.get(hashId(sid), cb);
  }

  override set(sid: string, session: SessionData, cb?: Parameters<RedisStore["set"]>[2]) {
    return super.set(hashId(sid), session, cb);
  }

  override touch(sid: string, session: SessionData, cb?: Parameters<RedisStore["touch"]>[2]) {
    return super.touch(hashId(sid), session, cb);
  }

  override destroy(sid: string, cb?: Parameters<RedisStore["destroy"]>[1]) {
    return super.destroy(hashId(sid), cb);
  }
}
