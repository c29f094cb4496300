import { createHash, randomBytes } from "node:crypto";
import type { Request, Response } from "express";
import type { RedisClient as Redis } from "@gen/queues";
import { PRE_SIGN_IN_COOKIE, cookieOptions } from "./cookies.ts";

/** A sign-in form is good for this long after it was served. */
const LIFETIME_MS = 30 * 60_000;
const ID = /^([0-9a-z]{1,12})\.[\w-]{43}$/;

/**
 * The browser's session before sign-in: a random id in a cookie of its own, stamped with the time
 * it was issued. The sign-in form's CSRF pair is made for this id (csrf.ts), so a pair taken from
 * one pre-sign-in session is refused with any other; and each one is good for one sign-in attempt
 * (`consume`), so a single pair cannot be replayed into a flood. Nothing is stored until the form
 * is posted: serving the form costs Redis nothing.
 */
export class PreSignInSessions {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly secureCookies: boolean,
  ) {}

  /** The request's pre-sign-in id, unless it has none or it is older than its lifetime. */
  current(req: Request, now = Date.now()): string | undefined {
    const id: unknown = (req.cookies as Record<string, unknown> | undefined)?.[PRE_SIGN_IN_COOKIE];
    const match = typeof id === "string" ? ID.exec(id) : null;
    if (!match) return undefined;
    const issued = parseInt(match[1]!, 36);
    return issued <= now && now - issued < LIFETIME_MS ? (id as string) : undefined;
  }

  /** A new pre-sign-in session for the form about to be served, readable by `current` at once. */
  start(req: Request, res: Response): string {
    const id = `${Date.now().toString(36)}.${randomBytes(32).toString("base64url")}`;
    res.cookie(PRE_SIGN_IN_COOKIE, id, { ...cookieOptions(this.secureCookies), maxAge: LIFETIME_MS });
    (req.cookies as Record<string, string>)[PRE_SIGN_IN_COOKIE] = id;
    return id;
  }

  /** True the first time an id is posted, false after: one sign-in attempt per form. */
  async consume(id: string): Promise<boolean> {
    const key = `${this.prefix}:console:pre-sign-in:${createHash("sha256").update(id).digest("base64url").slice(0, 22)}`;
    return (await this.redis.set(key, "1", "PX", LIFETIME_MS, "NX")) === "OK";
  }
}
