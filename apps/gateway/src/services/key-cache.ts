// Revocation reaches the cache by the listener's notices (key-revocations.ts), not by expiry: this
// only bounds a revocation that bypassed the api_keys trigger (one made with triggers disabled,
// `session_replication_role = replica`, as a restore may do).
const KEY_CACHE_TTL_MS = 60_000;
// Valid keys only (a lookup that found no key or a revoked one adds nothing), so a flood of bogus
// keys cannot grow it; 10,000 entries of about 200 B each is ~2 MB.
const MAX_ENTRIES = 10_000;

interface Entry {
  userId: string;
  expiresAt: number;
}

/**
 * API key hash → user, in this process. An entry is only a hint that skips the PostgreSQL read,
 * and the cache answers only while this process LISTENs for revocations (key-revocations.ts):
 * each notice drops its key, and the whole cache is off while the listener is not connected
 * (every request reads the database) and starts empty each time it connects again, since notices
 * sent in between were missed.
 */
export class KeyCache {
  // Insertion-ordered, refreshed on use: the least recently used entry goes first when full.
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  // Off until the listener first connects.
  private listening = false;
  // The key moved to the end last: using it again needs no move (deleting and re-inserting a Map
  // key leaves a hole that costs a rehash every few uses; one hot key is the common case).
  private newest: string | undefined;

  get size(): number {
    return this.entries.size;
  }

  get(keyHash: string, now = Date.now()): string | undefined {
    if (!this.listening) return undefined;
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
    if (read.generation !== this.generation || !this.listening) return;
    this.entries.delete(keyHash);
    this.entries.set(keyHash, { userId, expiresAt: read.startedAt + KEY_CACHE_TTL_MS });
    this.newest = keyHash;
    // The oldest is never the newest: the map holds more than one entry here.
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  /**
   * A notice that the key is revoked. Reads in flight are not kept either: one whose snapshot
   * predates the revoking commit may answer after its notice arrived.
   */
  revoke(keyHash: string): void {
    this.generation++;
    this.delete(keyHash);
  }

  /** The listener is (again) connected: start empty, every notice from now on arrives. */
  resume(): void {
    this.clear();
    this.listening = true;
  }

  /** The listener is not connected: notices may be missed, so nothing is answered from memory. */
  suspend(): void {
    this.listening = false;
    this.clear();
  }

  private delete(keyHash: string): void {
    this.entries.delete(keyHash);
    if (keyHash === this.newest) this.newest = undefined;
  }

  private clear(): void {
    this.generation++;
    this.entries.clear();
    this.newest = undefined;
  }
}
