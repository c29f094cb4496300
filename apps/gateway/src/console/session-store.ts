import { createHash, randomBytes } from "node:crypto";
import type { RedisClient as Redis } from "@gen/queues";
import type { ConsoleConfig } from "@gen/config";

export interface ConsoleSession {
  operatorId: string;
  email: string;
  csrfToken: string;
  createdAt: number;
  /** passwordStamp() of the hash at sign-in: a password reset ends every session opened before it. */
  passwordStamp: string;
}

/** A fingerprint of the stored hash (new salt on every reset), never the hash itself. */
export function passwordStamp(passwordHash: string): string {
  return createHash("sha256").update(passwordHash).digest("base64url").slice(0, 22);
}

/**
 * Console sessions in Redis, so every gateway instance shares them and sign-out is immediate. The
 * cookie holds a random token; Redis holds only its SHA-256, so a Redis dump cannot be replayed.
 * Each use pushes the idle expiry forward; sessionMaxMs caps a session's life from sign-in.
 */
export class SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly config: ConsoleConfig,
  ) {}

  async create(operator: { id: string; email: string; passwordHash: string }): Promise<{ token: string; session: ConsoleSession }> {
    const token = randomBytes(32).toString("base64url");
    const session: ConsoleSession = {
      operatorId: operator.id,
      email: operator.email,
      csrfToken: randomBytes(32).toString("base64url"),
      createdAt: Date.now(),
      passwordStamp: passwordStamp(operator.passwordHash),
    };
    await this.redis.set(this.key(token), JSON.stringify(session), "PX", this.config.sessionIdleMs);
    return { token, session };
  }

  async get(token: string): Promise<ConsoleSession | null> {
    if (!/^[\w-]{43}$/.test(token)) return null;
    const key = this.key(token);
    const raw = await this.redis.get(key);
    if (raw === null) return null;
    const session = JSON.parse(raw) as ConsoleSession;
    const left = session.createdAt + this.config.sessionMaxMs - Date.now();
    if (left <= 0) {
      await this.redis.del(key);
      return null;
    }
    await this.redis.pexpire(key, Math.min(this.config.sessionIdleMs, left));
    return session;
  }

  async destroy(token: string): Promise<void> {
    await this.redis.del(this.key(token));
  }

  private key(token: string): string {
    return `${this.prefix}:console:session:${createHash("sha256").update(token).digest("hex")}`;
  }
}
