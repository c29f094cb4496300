import { randomBytes, scrypt } from "node:crypto";
import { promisify } from "node:util";
import { hashingQueue, type HashingOptions } from "./hashing-queue.ts";
import { SCRYPT, SCRYPT_MAXMEM } from "./scrypt-params.ts";

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

/** `scrypt$<N>$<r>$<p>$<salt>$<hash>` (base64url): the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string, options?: HashingOptions): Promise<string> {
  const salt = randomBytes(SCRYPT.saltLength);
  const { N, r, p, keyLength } = SCRYPT;
  const hash = await derive(password, salt, keyLength, { N, r, p }, options);
  return ["scrypt", N, r, p, salt.toString("base64url"), hash.toString("base64url")].join("$");
}

/** Throws HashingBusy (queue full) or HashingAbandoned (options.signal fired before the hash started). */
export async function derive(
  password: string,
  salt: Buffer,
  keyLength: number,
  params: { N: number; r: number; p: number },
  options?: HashingOptions,
): Promise<Buffer> {
  return hashingQueue.run(() => scryptAsync(password.normalize("NFC"), salt, keyLength, { ...params, maxmem: SCRYPT_MAXMEM }), options);
}
