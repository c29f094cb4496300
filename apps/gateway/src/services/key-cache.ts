import { KEY_CACHE_TTL_MS } from "@gen/rate-limit";

// Valid keys only (a lookup that found no key or a revoked one adds nothing), so a flood of bogus
// keys cannot grow it; 10,000 entries of about 200 B each is ~2 MB.
const MAX_ENTRIES = 10_000;

interface Entry {
  userId: string;
  expiresAt: number;
}

/**
 * API key hash → user, in this process. An entry is only a hint that skips the PostgreSQL read:
 * revocation is checked by the rate limiter's Redis call on every request that uses one
 * (rate-limit.ts), entries expire KEY_CACHE_TTL_MS after the read that made them (the bound for a
 * revocation whose Redis marker was lost), and the whole cache is dropped whenever this process
 * loses its Redis connection (markers may be gone with it).
 */
export class KeyCache {
  // Insertion-ordered, refreshed on use: the least recently used entry goes first when full.
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  // The key moved to the end last: using it again needs no move (deleting and re-inserting a Map
  // key leaves a hole that costs a rehash every few uses; one hot key is the common case).
  private newest: string | undefined;

  get size(): number {
    return this.entries.size;
  }

  get(keyHash: string, now = Date.now()): string | undefined {
    const entry = this.entries.get(keyHash);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.delete(keyHash);
      return undefined;
    }
    if (keyHash !== this.newest) {
      this.entries.delete(keyHash);
      this.entries.set(keyHash, entry);
      this.newest = keyHash;
    }
    return entry.userId;
  }

  /** A token to pass to `set` after the read: a `clear` in between makes that read too old to keep. */
  beginRead(now = Date.now()): { generation: number; startedAt: number } {
    return { generation: this.generation, startedAt: now };
  }

  set(keyHash: string, userId: string, read: { generation: number; startedAt: number }): void {
    if (read.generation !== this.generation) return;
    this.entries.delete(keyHash);
    this.entries.set(keyHash, { userId, expiresAt: read.startedAt + KEY_CACHE_TTL_MS });
    this.newest = keyHash;
    // The oldest is never the newest: the map holds more than one entry here.
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(keyHash: string): void {
    this.entries.delete(keyHash);
    if (keyHash === this.newest) this.newest = undefined;
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.newest = undefined;
  }
}
