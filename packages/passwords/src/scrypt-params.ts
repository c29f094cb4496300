// scrypt with N = 2^15, r = 8, p = 1: about 32 MiB and 50-100 ms per hash on one core (OWASP's
// minimum is N = 2^17 with r = 8 for interactive logins on dedicated hardware; sign-in here is rare
// and rate-limited, and gateways share two cores with the database in small deployments).
export const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keyLength: 32, saltLength: 16 } as const;

// Node refuses parameters needing more than maxmem (32 MiB by default); 128 * N * r is exactly 32 MiB.
export const SCRYPT_MAXMEM = 64 * 1024 * 1024;
