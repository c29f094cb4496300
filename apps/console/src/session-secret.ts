import { randomBytes } from "node:crypto";
import type { RedisClient as Redis } from "@gen/queues";

/**
 * The key that signs session cookies and the sign-in form's CSRF cookie. CONSOLE_SESSION_SECRET
 * when set; otherwise one random secret per deployment, kept in Redis next to the sessions, so every
 * gateway and console process of the deployment (same REDIS_URL and QUEUE_PREFIX) shares it and a
 * restart signs no one out. The session ids themselves are kept hashed, so that secret in a Redis
 * dump does not make the dump replayable.
 */
export async function loadSessionSecret(redis: Redis, prefix: string, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  const key = `${prefix}:console:session-secret`;
  await redis.set(key, randomBytes(32).toString("base64url"), "NX");
  const secret = await redis.get(key);
  if (!secret) throw new Error("console session secret vanished from Redis");
  return secret;
}
