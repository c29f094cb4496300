// scrypt with N = 2^17, r = 8, p = 1: OWASP's Password Storage Cheat Sheet minimum for scrypt,
// 128 MiB and a few hundred milliseconds per hash on one core. Sign-in is rare and rate-limited,
// and hashing-queue.ts caps how many run at once, so the memory per process stays bounded.
export const SCRYPT = { N: 2 ** 17, r: 8, p: 1, keyLength: 32, saltLength: 16 } as const;

// Node refuses parameters needing more than maxmem (32 MiB by default). scrypt needs 128 * N * r
// bytes (128 MiB here); twice that leaves room to raise N once more without refusing old hashes.
export const SCRYPT_MAXMEM = 256 * 1024 * 1024;

/** Whether stored parameters fit maxmem: a hash that would need more can never verify. */
export function fitsMaxmem(params: { N: number; r: number; p: number }): boolean {
  return 128 * params.N * params.r * params.p < SCRYPT_MAXMEM;
}
