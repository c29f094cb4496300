import { timingSafeEqual } from "node:crypto";
import { derive } from "./hash-password.ts";
import type { HashingOptions } from "./hashing-queue.ts";
import { SCRYPT, fitsMaxmem } from "./scrypt-params.ts";

// Spent when the account does not exist, so a wrong e-mail costs as much time as a wrong password.
const DECOY = { salt: Buffer.alloc(SCRYPT.saltLength), hash: Buffer.alloc(SCRYPT.keyLength) };

interface ParsedHash {
  params: { N: number; r: number; p: number };
  salt: Buffer;
  hash: Buffer;
}

/**
 * Checks a password against a stored hash; `null` (no such operator) still spends one hash and
 * answers false. Throws HashingBusy or HashingAbandoned (hashing-queue.ts) without having checked.
 */
export async function verifyPassword(password: string, stored: string | null, options?: HashingOptions): Promise<boolean> {
  const parsed = stored === null ? null : parse(stored);
  if (!parsed) {
    await derive(password, DECOY.salt, DECOY.hash.length, SCRYPT, options);
    return false;
  }
  const actual = await derive(password, parsed.salt, parsed.hash.length, parsed.params, options);
  return timingSafeEqual(actual, parsed.hash);
}

/**
 * True when a stored hash was made with other parameters than today's (an older, cheaper N): the
 * caller rehashes the password it has just verified, so hashes move up without a reset.
 */
export function needsRehash(stored: string): boolean {
  const parsed = parse(stored);
  if (!parsed) return true;
  const { N, r, p } = parsed.params;
  return N !== SCRYPT.N || r !== SCRYPT.r || p !== SCRYPT.p || parsed.hash.length !== SCRYPT.keyLength;
}

function parse(stored: string): ParsedHash | null {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return null;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || !fitsMaxmem({ N, r, p })) return null;
  const salt = Buffer.from(parts[4]!, "base64url");
  const hash = Buffer.from(parts[5]!, "base64url");
  if (salt.length === 0 || hash.length === 0) return null;
  return { params: { N, r, p }, salt, hash };
}
